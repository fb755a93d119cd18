/* bench_meta_table <table> <scratch dir> [real files]: C-side numbers for bench/RESULTS.md.
 * Times fs_table_open (map + full validation), fs_table_lookup of every file's key in shuffled order (the key
 * rebuilt from the table just before, into a buffer), lookup plus filling a struct stat (what the shim's stat does)
 * on keys prepared beforehand in the caller's memory (up to 2M of them: what the shim has after normalising a
 * path), against native stat() of real files created under the scratch directory in the same run (same shape:
 * n%08d directories of 1300 files, names of the same length). */
#include "meta_table.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Wall time, or with BENCH_CLOCK=cpu this thread's CPU time (on a shared machine: time lost to other processes'
 * turns on the CPU is not counted; their cache pressure still is). */
static double now(void)
{
    static int cpu = -1;
    if (cpu < 0)
        cpu = getenv("BENCH_CLOCK") != NULL && strcmp(getenv("BENCH_CLOCK"), "cpu") == 0;
    struct timespec ts;
    clock_gettime(cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void shuffle(uint32_t *a, size_t n)
{
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)rand() % (i + 1);
        uint32_t t = a[i]; a[i] = a[j]; a[j] = t;
    }
}

static void fill_stat(const fs_table *t, uint32_t idx, struct stat *st)
{
    const fs_entry *e = fs_table_entry(t, idx);
    const fs_attr *a = fs_entry_attrs(t, e);
    int64_t sec;
    uint32_t nsec;
    fs_entry_mtime(e, &sec, &nsec);
    memset(st, 0, sizeof *st);
    st->st_dev = t->st_dev;
    st->st_ino = idx + 1;
    st->st_mode = a->mode;
    st->st_nlink = 1;
    st->st_uid = a->uid;
    st->st_gid = a->gid;
    st->st_size = (off_t)fs_entry_size(e);
    st->st_blksize = 4096;
    st->st_blocks = (blkcnt_t)((fs_entry_size(e) + 511) / 512);
    st->st_mtim.tv_sec = sec;
    st->st_mtim.tv_nsec = nsec;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s <table> <scratch dir> [real files, default 130000]\n", argv[0]);
        return 2;
    }
    size_t real_files = argc > 3 ? strtoul(argv[3], NULL, 10) : 130000;
    fs_table t;
    double t0 = now();
    int rc = fs_table_open(argv[1], &t);
    double open_s = now() - t0;
    if (rc != 0) {
        fprintf(stderr, "fs_table_open %s: %s\n", argv[1], strerror(-rc));
        return 1;
    }
    printf("c open+validate: %.1f ms for %llu entries (%zu bytes)\n", open_s * 1e3,
           (unsigned long long)t.entry_count, t.length);

    uint32_t *files = malloc(t.entry_count * sizeof *files);
    size_t n = 0;
    for (uint64_t i = 0; i < t.entry_count; i++)
        if (S_ISREG(fs_entry_mode(&t, fs_table_entry(&t, (uint32_t)i))))
            files[n++] = (uint32_t)i;
    srand(42);
    shuffle(files, n);
    unsigned long long sink = 0;
    for (int pass = 0; pass < 3; pass++) {
        t0 = now();
        for (size_t i = 0; i < n; i++) {
            char path[4096];
            ssize_t len = fs_table_key(&t, files[i], path, sizeof path);
            sink += (unsigned long long)fs_table_lookup(&t, path, (size_t)len);
        }
        double s = now() - t0;
        printf("c key+lookup pass %d: %.2f M lookups/s (%.0f ns each)\n", pass, n / s / 1e6, s * 1e9 / n);
    }
    /* Keys prepared in the caller's memory, in the same shuffled order (the first 2M files of it). */
    size_t m = n < 2000000 ? n : 2000000, used = 0;
    char *keys = malloc(m * 256);
    uint32_t *key_at = malloc((m + 1) * sizeof *key_at);
    for (size_t i = 0; i < m; i++) {
        key_at[i] = (uint32_t)used;
        ssize_t len = fs_table_key(&t, files[i], keys + used, m * 256 - used);
        used += (size_t)len;
    }
    key_at[m] = (uint32_t)used;
    struct stat st;
    for (int pass = 0; pass < 3; pass++) {
        t0 = now();
        for (size_t i = 0; i < m; i++) {
            int64_t idx = fs_table_lookup(&t, keys + key_at[i], key_at[i + 1] - key_at[i]);
            fill_stat(&t, (uint32_t)idx, &st);
            sink += (unsigned long long)st.st_size;
        }
        double s = now() - t0;
        printf("c lookup+fill struct stat (prepared keys) pass %d: %.2f M/s (%.0f ns each) over %zu keys\n", pass,
               m / s / 1e6, s * 1e9 / m, m);
    }
    free(keys);
    free(key_at);

    /* Native stat on real files of the same shape. */
    size_t per_dir = 1300, made = 0;
    char (*paths)[128] = malloc(real_files * sizeof *paths);
    for (size_t d = 0; made < real_files; d++) {
        char dir[128];
        if ((size_t)snprintf(dir, sizeof dir, "%s/n%08zu", argv[2], d) >= sizeof dir) {
            fprintf(stderr, "%s: directory name too long for this benchmark\n", argv[2]);
            return 1;
        }
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            perror(dir);
            return 1;
        }
        for (size_t f = 0; f < per_dir && made < real_files; f++, made++) {
            if ((size_t)snprintf(paths[made], sizeof paths[made], "%s/n%08zu_%zu.JPEG", dir, d, f)
                >= sizeof paths[made]) {
                fprintf(stderr, "%s: directory name too long for this benchmark\n", argv[2]);
                return 1;
            }
            int fd = open(paths[made], O_CREAT | O_WRONLY, 0644);
            if (fd < 0) {
                perror(paths[made]);
                return 1;
            }
            close(fd);
        }
    }
    uint32_t *order = malloc(made * sizeof *order);
    for (size_t i = 0; i < made; i++)
        order[i] = (uint32_t)i;
    shuffle(order, made);
    for (int pass = 0; pass < 3; pass++) {
        t0 = now();
        for (size_t i = 0; i < made; i++) {
            if (stat(paths[order[i]], &st) != 0) {
                perror("stat");
                return 1;
            }
            sink += (unsigned long long)st.st_ino;
        }
        double s = now() - t0;
        printf("native stat pass %d: %.2f M stat/s (%.0f ns each) over %zu real files\n", pass, made / s / 1e6,
               s * 1e9 / made, made);
    }
    printf("(sink %llu)\n", sink);
    free(order);
    free(paths);
    free(files);
    fs_table_close(&t);
    return 0;
}
