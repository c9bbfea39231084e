# Rules for examples/, included by the top-level Makefile.am.
