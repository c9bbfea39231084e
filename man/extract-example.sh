#!/bin/sh
# SPDX-License-Identifier: MIT
# Print the C program in the EXAMPLES section of a man page, with its troff
# escapes turned back into C.  The pages stay the only copy of each example,
# so the program the tests compile is the one a reader sees.
#
#   man/extract-example.sh man/sparse_map.3 > sparse_map.c
#   man/extract-example.sh man/sparse_map.3 adopt-copy > adopt-copy.c
#
# With a NAME, the program is instead the example blocks (.EX to .EE) that
# follow the comment line `.\" program: NAME`, in any section, up to the
# next such comment or section heading: a page may show more programs than
# its EXAMPLES one.  Without a NAME, blocks after such a comment are left
# out, so EXAMPLES may end with a second, named program.
#
# Exits 1 when the page has no such program, and 2 on an escape it does
# not know (rather than hand the compiler something the page does not say).
set -eu

[ $# -eq 1 ] || [ $# -eq 2 ] || { echo "usage: $0 PAGE [NAME]" >&2; exit 2; }
awk -v want="${2-}" '
function unescape(s,    out, i, c, n) {
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c != "\\") { out = out c; continue }
		n = substr(s, i + 1, 1)
		if (n == "e") { out = out "\\"; i++ }
		else if (n == "-") { out = out "-"; i++ }
		else if (n == "&") { i++ }
		else if (substr(s, i + 1, 3) == "(aq") { out = out "\047"; i += 3 }
		else if (substr(s, i + 1, 3) == "(dq") { out = out "\""; i += 3 }
		else if (substr(s, i + 1, 3) == "(rs") { out = out "\\"; i += 3 }
		else if (substr(s, i + 1, 3) == "(ti") { out = out "~"; i += 3 }
		else if (substr(s, i + 1, 3) == "(ha") { out = out "^"; i += 3 }
		else {
			printf "%s:%d: unknown escape in example: %s\n", FILENAME, FNR, substr(s, i, 4) > "/dev/stderr"
			bad = 1
			exit 2
		}
	}
	return out
}
/^\.SH / { section = $0; sub(/^\.SH +/, "", section); gsub(/"/, "", section); inex = 0; program = ""; next }
/^\.\\" program: / { program = $0; sub(/^\.\\" program: */, "", program); next }
want == "" && (section != "EXAMPLES" || program != "") { next }
want != "" && program != want { next }
/^\.EX/ { inex = 1; found = 1; next }
/^\.EE/ { inex = 0; next }
inex && /^\.\\"/ { next }
inex && /^[.\047]/ {
	printf "%s:%d: a request inside the example: %s\n", FILENAME, FNR, $0 > "/dev/stderr"
	bad = 1
	exit 2
}
inex { print unescape($0) }
END { if (bad) exit 2; if (!found) exit 1 }
' "$1"
