/* SPDX-License-Identifier: MIT */
/* What the reliability tests ask of a file's bytes. */
#ifndef SM_REL_BYTES_H
#define SM_REL_BYTES_H

#include <stdbool.h>
#include <stdint.h>

/* Is any byte of [off, end) of fd not zero?  Past EOF reads as zeroes. */
bool rel_has_data(int fd, int64_t off, int64_t end);

#endif
