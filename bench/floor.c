/* The engine's floor: 4 KiB random pwrite()s in a bare loop on one file, no clock per I/O,
 * no histogram, no completion bookkeeping. What the psync path costs with nothing around it.
 *   floor FILE SIZE_BYTES SECONDS    -> prints "<ios> <seconds> <iops>" */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: floor FILE SIZE_BYTES SECONDS\n");
        return 2;
    }
    long long size = atoll(argv[2]);
    double secs = atof(argv[3]);
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, size) != 0) {
        perror(argv[1]);
        return 2;
    }
    static char buf[4096] __attribute__((aligned(4096)));
    memset(buf, 0xa5, sizeof buf);
    uint64_t blocks = size / 4096, x = 0x9e3779b97f4a7c15ULL, ios = 0;
    double start = now(), end = start + secs, t = start;
    /* The clock is read once per 4096 writes only: the loop is the write and a xorshift. */
    while (t < end) {
        for (int i = 0; i < 4096; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            if (pwrite(fd, buf, 4096, (off_t)(x % blocks) * 4096) != 4096) {
                perror("pwrite");
                return 2;
            }
        }
        ios += 4096;
        t = now();
    }
    printf("%llu %.6f %.1f\n", (unsigned long long)ios, t - start, ios / (t - start));
    close(fd);
    unlink(argv[1]);
    return 0;
}
