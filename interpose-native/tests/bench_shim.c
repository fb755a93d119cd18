/* bench_shim: times path calls, to be run natively and under LD_PRELOAD=libfanstore.so (bench_shim.sh).
 *   bench_shim stat|lstat|access|open <iterations> <path>...   cycles through the paths, prints ns/call
 *   bench_shim classify <iterations> <path>...                  fs_path_classify alone (link path_norm.c):
 *                                                               the shim's added work on an off-prefix path
 * Not a test (no test_ prefix): tests/run.sh does not pick it up. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef WITH_CLASSIFY
#include <limits.h>
#include "path_norm.h"
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_shim stat|lstat|access|open|classify <iterations> <path>...\n");
        return 2;
    }
    const char *mode = argv[1];
    long iters = atol(argv[2]);
    char **paths = argv + 3;
    int npaths = argc - 3;
    long failures = 0;
    struct stat st;
    double t0 = now();
    if (strcmp(mode, "stat") == 0) {
        for (long i = 0; i < iters; i++)
            failures += stat(paths[i % npaths], &st) != 0;
    } else if (strcmp(mode, "lstat") == 0) {
        for (long i = 0; i < iters; i++)
            failures += lstat(paths[i % npaths], &st) != 0;
    } else if (strcmp(mode, "access") == 0) {
        for (long i = 0; i < iters; i++)
            failures += access(paths[i % npaths], R_OK) != 0;
    } else if (strcmp(mode, "open") == 0) {
        for (long i = 0; i < iters; i++) {
            int fd = open(paths[i % npaths], O_RDONLY);
            failures += fd < 0;
            if (fd >= 0)
                close(fd);
        }
#ifdef WITH_CLASSIFY
    } else if (strcmp(mode, "classify") == 0) {
        fs_ns ns = { .mount = "/fanstore", .mount_len = 9 };
        char key[PATH_MAX];
        size_t len;
        for (long i = 0; i < iters; i++) {
            const char *volatile p = paths[i % npaths];
            failures += fs_path_classify(&ns, p, key, sizeof key, &len) != FS_PATH_OUTSIDE;
        }
#endif
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    double ns = (now() - t0) / (double)iters;
    printf("%s %.1f ns/call %.0f calls/s (%ld failed)\n", mode, ns, 1e9 / ns, failures);
    return 0;
}
