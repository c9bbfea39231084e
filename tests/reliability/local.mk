# Rules for tests/reliability/, included by the top-level Makefile.am.
