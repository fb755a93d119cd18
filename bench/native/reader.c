/* reader: the paper's access pattern, stat + open + read + close per file, over a list of paths.
 *
 *   reader read|stat PASSES LIST_FILE [THREADS]
 *
 * Runs PASSES passes (the first ones warm caches) and reports the last: "files N seconds S files_per_s F
 * MB_per_s M". With READER_REPORT=median in the environment it reports the median pass after the first (of k
 * such passes, the (k/2+1)-th fastest: the slower middle one): a warm pass over a few hundred MiB lasts tens of
 * milliseconds, so one hiccup of the machine can make "the last pass" a third of the usual rate. With THREADS > 1 the threads take the next path from one shared counter, as a DataLoader's
 * workers take the next index: a fixed split (thread t takes i % THREADS == t) lined up with the partition
 * layout and gave one thread every file another rank holds, so remote opens ran one at a time. Exits 1 if any call fails, naming the path: a benchmark that
 * silently skips files lies. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char **paths;
static size_t n;
static int read_mode;
static int threads = 1;
static atomic_size_t next_path;

struct share {
    long long bytes;
    int failed;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *run_share(void *arg)
{
    struct share *sh = arg;
    size_t bufsize = 1 << 20;
    char *buf = malloc(bufsize);
    for (size_t i = atomic_fetch_add(&next_path, 1); i < n && !sh->failed; i = atomic_fetch_add(&next_path, 1)) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            fprintf(stderr, "reader: stat %s: %s\n", paths[i], strerror(errno));
            sh->failed = 1;
            break;
        }
        if (!read_mode)
            continue;
        int fd = open(paths[i], O_RDONLY);
        if (fd < 0) {
            fprintf(stderr, "reader: open %s: %s\n", paths[i], strerror(errno));
            sh->failed = 1;
            break;
        }
        ssize_t r;
        long long got = 0;
        while ((r = read(fd, buf, bufsize)) > 0)
            got += r;
        if (r < 0 || got != st.st_size) {
            fprintf(stderr, "reader: read %s: %s (%lld of %lld bytes)\n", paths[i],
                    r < 0 ? strerror(errno) : "short", got, (long long)st.st_size);
            sh->failed = 1;
        }
        sh->bytes += got;
        close(fd);
    }
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s read|stat PASSES LIST_FILE [THREADS]\n", argv[0]);
        return 2;
    }
    read_mode = strcmp(argv[1], "read") == 0;
    int passes = atoi(argv[2]);
    if (argc == 5)
        threads = atoi(argv[4]);
    if (passes < 1 || threads < 1 || threads > 256) {
        fprintf(stderr, "reader: PASSES >= 1 and 1 <= THREADS <= 256\n");
        return 2;
    }
    FILE *f = fopen(argv[3], "r");
    if (!f) {
        perror(argv[3]);
        return 2;
    }
    size_t cap = 1024;
    paths = malloc(cap * sizeof *paths);
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (n == cap)
            paths = realloc(paths, (cap *= 2) * sizeof *paths);
        paths[n++] = strdup(line);
    }
    fclose(f);
    double t0 = 0, t1 = 0;
    long long bytes = 0;
    const char *report = getenv("READER_REPORT");
    int median = report != NULL && strcmp(report, "median") == 0 && passes > 1;
    double *times = calloc((size_t)passes, sizeof *times);
    struct share shares[256];
    pthread_t tids[256];
    for (int p = 0; p < passes; p++) {
        bytes = 0;
        atomic_store(&next_path, 0);
        t0 = now();
        for (int t = 0; t < threads; t++) {
            shares[t] = (struct share){0};
            if (pthread_create(&tids[t], NULL, run_share, &shares[t]) != 0) {
                fprintf(stderr, "reader: cannot start thread %d\n", t);
                return 1;
            }
        }
        int failed = 0;
        for (int t = 0; t < threads; t++) {
            pthread_join(tids[t], NULL);
            bytes += shares[t].bytes;
            failed |= shares[t].failed;
        }
        t1 = now();
        if (failed)
            return 1;
        times[p] = t1 - t0;
    }
    double s = t1 - t0;
    if (median) {
        int k = passes - 1;                 /* the warm passes: 1..passes-1, sorted by time, ascending */
        for (int i = 2; i < passes; i++)
            for (int j = i; j > 1 && times[j] < times[j - 1]; j--) {
                double swap = times[j];
                times[j] = times[j - 1];
                times[j - 1] = swap;
            }
        s = times[1 + k / 2];
    }
    free(times);
    printf("files %zu seconds %.4f files_per_s %.1f MB_per_s %.1f\n", n, s, n / s, bytes / s / 1e6);
    return 0;
}
