# Rules for man/, included by the top-level Makefile.am.
