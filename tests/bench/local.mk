# Rules for tests/bench/, included by the top-level Makefile.am.
