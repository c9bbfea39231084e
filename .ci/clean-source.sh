# SPDX-License-Identifier: MIT
# Sourced by the stages in .ci/stages/: sets src to a copy of the checkout's
# sources (tracked files, as they are in the work tree) that no build has
# configured.  The README's commands build in the checkout itself, and
# configure refuses an out-of-tree build of a tree configured in place.
# The copy is made once and reused while the sources stay the same.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src=${TMPDIR:-/tmp}/sm-stage-src
stamp=$(cd "$top" && { git ls-files -s; git diff; } | sha1sum | cut -d' ' -f1)
if [ "$(cat "$src/.stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$src"
	mkdir -p "$src"
	(cd "$top" && git ls-files -z | xargs -0 cp --parents -t "$src")
	(cd "$src" && ./autogen.sh >/dev/null 2>&1)
	echo "$stamp" >"$src/.stamp"
fi
