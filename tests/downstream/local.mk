# Rules for tests/downstream/, included by the top-level Makefile.am.
#
# GNU cp and GNU tar's own sparse tests, built on this library (issue 28):
# `make check-downstream` installs this build into a directory of its own,
# where pkg-config finds it, and runs tests/downstream/run.sh (root and a
# network: about ten minutes; CI's stage 45 runs it).  With
# SM_DOWNSTREAM_DIR=DIR (in the environment) the install, the downloads and
# the builds are kept in DIR, for the next run and for `make bench`.
EXTRA_DIST += tests/downstream/run.sh
check-downstream: all
	@if [ -n "$${SM_DOWNSTREAM_DIR:-}" ]; then \
		d=$$(mkdir -p "$$SM_DOWNSTREAM_DIR" && cd "$$SM_DOWNSTREAM_DIR" && pwd)/stage && \
		rm -rf "$$d" && mkdir -p "$$d"; \
	else \
		d=$$(mktemp -d "$${TMPDIR:-/tmp}/sm-downstream-lib.XXXXXX") && trap 'rm -rf "$$d"' EXIT; \
	fi && \
	$(MAKE) install DESTDIR="$$d" >/dev/null && \
	PKG_CONFIG_SYSROOT_DIR="$$d" PKG_CONFIG_LIBDIR="$$d$(pkgconfigdir)" PKG_CONFIG_PATH= \
		bash '$(abs_top_srcdir)/tests/downstream/run.sh'
.PHONY: check-downstream
