#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A big-endian build: s390x (Debian's gcc-s390x-linux-gnu), whose programs
# qemu-s390x runs on this kernel; .ci/emulated.sh says what runs and where.
. "$(dirname "$0")/../emulated.sh"
emulated_stage s390x-linux-gnu s390x
