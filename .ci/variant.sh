# SPDX-License-Identifier: MIT
# Sourced by the stages that build the library configured otherwise
# (.ci/stages/35-*): variant() configures, builds and tests one way in a
# build directory of its own, from the clean source copy.
. "$(dirname "${BASH_SOURCE[0]}")/clean-source.sh"
export SM_MATRIX_SEEDS=${SM_MATRIX_SEEDS:-2}

# variant NAME CFLAGS TESTS CONFIGURE-ARGS...: TESTS "all" runs make check,
# "all-but TEST..." make check without those TESTS, else only the TESTS.
variant() {
	local name=$1 cflags=$2 tests=$3 build
	shift 3
	build=${TMPDIR:-/tmp}/sm-stage-variant-$name
	echo "--- $name: configure $* CFLAGS='$cflags'"
	rm -rf "$build"
	mkdir -p "$build"
	cd "$build"
	"$src/configure" -q CFLAGS="$cflags" "$@"
	if [ "$name" = no-check ] && ! grep -q '^S\["HAVE_CHECK_TRUE"\]="#"' config.status; then
		echo "FAIL: the no-check variant found Check after all"
		exit 1
	fi
	make -j2 >/dev/null
	if [ "$tests" = all ]; then
		make -j2 check || { cat test-suite.log; exit 1; }
	elif [ "${tests%% *}" = all-but ]; then
		local t keep=() skip left words
		read -ra words <<<"${tests#all-but}"
		skip=${words[*]}
		left=" $skip "
		# shellcheck disable=SC2016 # $(TESTS) is make's
		for t in $(printf 'sm-tests:\n\t@echo $(TESTS)\n' | make -s -f Makefile -f - sm-tests); do
			case $left in *" $t "*) left=${left/ $t / } ;; *) keep+=("$t") ;; esac
		done
		if [ -n "${left// /}" ]; then
			echo "FAIL: $name: no such tests to leave out:$left"
			exit 1
		fi
		echo "--- $name: all tests but $skip"
		make -j2 check TESTS="${keep[*]}" || { cat test-suite.log; exit 1; }
	else
		# shellcheck disable=SC2086
		make -j2 check TESTS="$(echo $tests)" || { cat test-suite.log; exit 1; }
	fi
	grep -E '^# (PASS|SKIP|FAIL):' test-suite.log | tr '\n' ' '
	echo
	cd / && rm -rf "$build"
}
