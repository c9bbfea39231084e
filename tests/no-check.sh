#!/bin/sh
# SPDX-License-Identifier: MIT
# In make check only where configure found no Check: the unit tests
# (tests/test-*.c, tests/reliability/test-*.c) were not built.
echo "SKIP: configure found no Check (check >= 0.11), so the unit tests were not built;"
echo "      install it (Debian: check) and run configure again"
exit 77
