# Rules for tests/matrix/, included by the top-level Makefile.am.
