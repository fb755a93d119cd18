/* tmpfs-floor: what one materialised open costs the kernel alone, with no runtime and no decoder.
 *
 *   tmpfs-floor DIR FILES BYTES [THREADS]
 *
 * Per file, what a decompressed open through fanstore does at the least: create a new file in DIR (a tmpfs),
 * write BYTES into it, rename it into place, then (the reader's side) open, read it whole, close, and unlink it
 * (eviction). The written bytes are a buffer already in cache, so the figure is a floor: allocating the new
 * file's pages, copying in and out, and the metadata calls. Reports like bench/native/reader.c: "files N seconds S
 * files_per_s F MB_per_s M" (one pass after a warm-up pass). Exits 1 naming the call that failed. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *dir;
static long files;
static size_t bytes;
static atomic_long next_file;
static atomic_int failed;

static void fail(const char *call, const char *path) {
    if (atomic_exchange(&failed, 1) == 0) {
        fprintf(stderr, "tmpfs-floor: %s %s: %m\n", call, path);
    }
}

static void *run(void *arg) {
    (void)arg;
    char *in = malloc(bytes);
    char *out = malloc(bytes);
    char tmp[4096];
    char final[4096];
    if (in == NULL || out == NULL) {
        fail("malloc", "");
        return NULL;
    }
    memset(in, 'x', bytes);
    for (long i; (i = atomic_fetch_add(&next_file, 1)) < files && !atomic_load(&failed);) {
        snprintf(tmp, sizeof tmp, "%s/e%ld.tmp", dir, i);
        snprintf(final, sizeof final, "%s/e%ld", dir, i);
        int fd = open(tmp, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, in, bytes) != (ssize_t)bytes || close(fd) != 0 || rename(tmp, final) != 0) {
            fail("create/write/rename", tmp);
            break;
        }
        fd = open(final, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read(fd, out, bytes) != (ssize_t)bytes || close(fd) != 0 || unlink(final) != 0) {
            fail("open/read/unlink", final);
            break;
        }
    }
    free(in);
    free(out);
    return NULL;
}

static double pass(int threads) {
    struct timespec t0;
    struct timespec t1;
    pthread_t tid[64];
    atomic_store(&next_file, 0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int t = 0; t < threads; t++) {
        pthread_create(&tid[t], NULL, run, NULL);
    }
    for (int t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: tmpfs-floor DIR FILES BYTES [THREADS]\n");
        return 2;
    }
    dir = argv[1];
    files = atol(argv[2]);
    bytes = (size_t)atol(argv[3]);
    int threads = argc > 4 ? atoi(argv[4]) : 1;
    if (files <= 0 || bytes == 0 || threads < 1 || threads > 64) {
        fprintf(stderr, "tmpfs-floor: FILES and BYTES must be positive, THREADS 1..64\n");
        return 2;
    }
    pass(threads);
    double s = pass(threads);
    if (atomic_load(&failed)) {
        return 1;
    }
    printf("files %ld seconds %.4f files_per_s %.1f MB_per_s %.1f\n", files, s, files / s,
           (double)files * (double)bytes / s / 1e6);
    return 0;
}
