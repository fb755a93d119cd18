/* reader: the paper's access pattern, stat + open + read + close per file, over a list of paths.
 *
 *   reader read|stat PASSES LIST_FILE
 *
 * Runs PASSES passes (the first ones warm caches) and reports the last: "files N seconds S files_per_s F
 * MB_per_s M". Exits 1 if any call fails, naming the path: a benchmark that silently skips files lies. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s read|stat PASSES LIST_FILE\n", argv[0]);
        return 2;
    }
    int read_mode = strcmp(argv[1], "read") == 0;
    int passes = atoi(argv[2]);
    FILE *f = fopen(argv[3], "r");
    if (!f) {
        perror(argv[3]);
        return 2;
    }
    size_t cap = 1024, n = 0;
    char **paths = malloc(cap * sizeof *paths);
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (n == cap)
            paths = realloc(paths, (cap *= 2) * sizeof *paths);
        paths[n++] = strdup(line);
    }
    fclose(f);
    size_t bufsize = 1 << 20;
    char *buf = malloc(bufsize);
    double t0 = 0, t1 = 0;
    long long bytes = 0;
    for (int p = 0; p < passes; p++) {
        bytes = 0;
        t0 = now();
        for (size_t i = 0; i < n; i++) {
            struct stat st;
            if (stat(paths[i], &st) != 0) {
                fprintf(stderr, "reader: stat %s: %s\n", paths[i], strerror(errno));
                return 1;
            }
            if (!read_mode)
                continue;
            int fd = open(paths[i], O_RDONLY);
            if (fd < 0) {
                fprintf(stderr, "reader: open %s: %s\n", paths[i], strerror(errno));
                return 1;
            }
            ssize_t r;
            while ((r = read(fd, buf, bufsize)) > 0)
                bytes += r;
            if (r < 0) {
                fprintf(stderr, "reader: read %s: %s\n", paths[i], strerror(errno));
                return 1;
            }
            close(fd);
        }
        t1 = now();
    }
    double s = t1 - t0;
    printf("files %zu seconds %.4f files_per_s %.1f MB_per_s %.1f\n", n, s, n / s, bytes / s / 1e6);
    return 0;
}
