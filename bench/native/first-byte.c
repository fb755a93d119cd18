/* first-byte: when the first byte of one file arrived, on CLOCK_MONOTONIC (bench/serve-at-once.sh).
 *
 *   first-byte now      prints the monotonic clock now ("12345.678901", seconds)
 *   first-byte PATH     opens PATH, reads 1 byte, closes it, then prints the monotonic clock
 *
 * The script takes "now" right before `fanstore run` starts and runs "first-byte /fanstore/<name>/<file>" as the
 * command's first step: the difference is launch -> first byte, whatever the runtime did before the command ran.
 * The clock is system-wide, so both readings compare across processes. Exits 1 naming the call that failed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void print_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    printf("%lld.%06ld\n", (long long)ts.tv_sec, ts.tv_nsec / 1000);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s now|PATH\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "now") != 0) {
        int fd = open(argv[1], O_RDONLY);
        if (fd < 0) {
            fprintf(stderr, "first-byte: open %s: %s\n", argv[1], strerror(errno));
            return 1;
        }
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r != 1) {
            fprintf(stderr, "first-byte: read %s: %s\n", argv[1], r < 0 ? strerror(errno) : "empty file");
            close(fd);
            return 1;
        }
        close(fd);
    }
    print_now();
    return 0;
}
