/* SPDX-License-Identifier: MIT */
/*
 * A program outside the libsparse-map tree, built only with
 *   pkg-config --cflags --libs libsparse-map
 * It prints the backend and the ranges of FILE, then the data total.
 */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sparse_map.h>

int main(int argc, char **argv)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	long long data = 0;
	int fd, rc;

	if (argc != 2) {
		fprintf(stderr, "usage: map-file FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	rc = sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, 0, &map);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	printf("backend %s\n", sparse_map_backend_name(sparse_map_get_backend(map)));
	while ((rc = sparse_map_next(map, &r)) == 1) {
		printf("%s %lld %lld\n", r.kind == SPARSE_MAP_DATA ? "data" : "hole",
		       (long long)r.offset, (long long)r.length);
		if (r.kind == SPARSE_MAP_DATA)
			data += r.length;
	}
	sparse_map_close(map);
	close(fd);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	printf("%lld data bytes\n", data);
	return 0;
}
