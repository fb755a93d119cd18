// link: meta_table.c meta_table_lookup.c
// cflags: -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
/* Bounded fuzz of the metadata-table reader (issue 10): every table in tests/vectors/metadata and one small tree
 * written by tests/meta3_build.h (names extending their directory's, a symlink, a deep chain), mutated at random
 * (byte flips, boundary values written over 32- and 64-bit fields, truncation, random tails), is either refused
 * by fs_table_open or walks cleanly end to end: every key, parent, child and link target, plus lookups, stay
 * inside the mapping (AddressSanitizer and UBSan abort otherwise). Fixed seed, bounded time:
 *   FANSTORE_FUZZ_SECONDS (default 20), FANSTORE_FUZZ_SEED (default 1), FANSTORE_FUZZ_ITERATIONS (0: no cap).
 * A longer run: FANSTORE_FUZZ_SECONDS=600 tests/run.sh test_meta_table_fuzz */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "meta3_build.h"
#include "meta_table.h"
#include "meta_walk.h"

#define MAX_INPUTS 64
#define MAX_LEN (1 << 16)

static char *inputs[MAX_INPUTS];
static size_t lengths[MAX_INPUTS];
static int input_count;
static uint64_t rng;

static uint64_t next(void)
{
    /* xorshift64*: reproducible from the seed on any libc, unlike rand(). */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ULL;
}

static void load(const char dir[4096])
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        perror(dir);
        exit(1);
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL && input_count < MAX_INPUTS - 1) {
        size_t n = strlen(de->d_name);
        if (n < 5 || strcmp(de->d_name + n - 4, ".tbl") != 0)
            continue;
        char path[4096 + 256 + 2];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, "rb");
        if (f == NULL)
            continue;
        char *buf = malloc(MAX_LEN);
        size_t len = fread(buf, 1, MAX_LEN, f);
        fclose(f);
        inputs[input_count] = buf;
        lengths[input_count++] = len;
    }
    closedir(d);
}

/* A small tree in ImageNet's shape plus a symlink, an empty directory and a chain, as one more input. */
static void add_built_input(void)
{
    static const char *keys[] = { "", "ds", "ds/n01", "ds/n01/n01_1.jpg", "ds/n01/n01_22.jpg", "ds/n01/x.jpg",
                                  "ds/n01/n01x", "ds/n01/n01x/n01x_3.jpg", "ds/link", "ds/empty", "ds/a", "ds/a/b",
                                  "ds/a/b/c" };
    enum { N = sizeof keys / sizeof keys[0] };
    static const uint32_t root[] = { 1 }, ds[] = { 10, 9, 8, 2 }, n01[] = { 3, 4, 6, 5 }, n01x[] = { 7 },
                          a[] = { 11 }, b[] = { 12 };
    m3_node nodes[N];
    for (uint32_t i = 0; i < N; i++)
        nodes[i] = (m3_node){ .key = keys[i], .key_len = (uint32_t)strlen(keys[i]), .mode = S_IFREG | 0644,
                              .mtime_ns = 1700000000000000000 + i, .size = 100 * i, .partition = (int32_t)(i % 3) - 1,
                              .flags = i % 2 ? FS_ENTRY_UNPACKABLE : 0 };
    const uint32_t *kids[N] = { [0] = root, [1] = ds, [2] = n01, [6] = n01x, [9] = ds, [10] = a, [11] = b };
    const uint32_t counts[N] = { [0] = 1, [1] = 4, [2] = 4, [6] = 1, [9] = 0, [10] = 1, [11] = 1 };
    for (uint32_t i = 0; i < N; i++) {
        if (kids[i] != NULL) {
            nodes[i].mode = S_IFDIR | 0755;
            nodes[i].children = kids[i];
            nodes[i].child_count = counts[i];
        }
    }
    nodes[8].mode = S_IFLNK | 0777;
    nodes[8].target = "n01/n01_1.jpg";
    nodes[8].target_len = 13;
    m3_out o = m3_build(nodes, N, (m3_header){ 2, 1, 7, 1 }, "/tmp/local", 0);
    inputs[input_count] = malloc(MAX_LEN);
    memcpy(inputs[input_count], o.bytes, o.len);
    lengths[input_count++] = o.len;
    free(o.bytes);
}

static size_t mutate(char *buf, size_t len)
{
    static const uint64_t boundary[] = {0, 1, 2, 7, 8, 64, 0x7f, 0x80, 0xff, 0xffff, 0x7fffffff, 0x80000000u,
                                        0xffffffffu, 0x100000000ull, 0x7fffffffffffffffull, ~0ull};
    int rounds = 1 + (int)(next() % 4);
    for (int r = 0; r < rounds; r++) {
        size_t span = (next() & 1) && len > 512 ? 512 : len;   /* half the time near the header */
        switch (next() % 5) {
        case 0:
        case 1:
            if (len > 0)
                buf[next() % span] ^= (char)(1 + next() % 255);
            break;
        case 2:
            if (len >= 8) {
                uint64_t v = boundary[next() % (sizeof boundary / sizeof boundary[0])];
                size_t at = (next() % (span >= 8 ? span - 7 : 1)) & ~(size_t)3;
                memcpy(buf + at, &v, (next() & 1) ? 8 : 4);
            }
            break;
        case 3:
            len = len > 0 ? (size_t)(next() % len) : 0;
            break;
        default: {
            size_t extra = next() % 256;
            for (size_t k = 0; k < extra && len < MAX_LEN; k++)
                buf[len++] = (char)next();
        }
        }
    }
    return len;
}

static unsigned long walk(const fs_table *t, const char *original, size_t original_len)
{
    return meta_walk(t, original, original_len, 37);
}

int main(void)
{
    const char *repo = getenv("FANSTORE_REPO");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/vectors/metadata", repo ? repo : "..");
    load(dir);
    add_built_input();
    if (input_count < 2) {
        fprintf(stderr, "no .tbl inputs in %s\n", dir);
        return 1;
    }
    const char *s = getenv("FANSTORE_FUZZ_SECONDS");
    const char *seed = getenv("FANSTORE_FUZZ_SEED");
    const char *cap = getenv("FANSTORE_FUZZ_ITERATIONS");
    double seconds = s ? atof(s) : 20.0;
    long max_iterations = cap ? atol(cap) : 0;
    rng = seed ? strtoull(seed, NULL, 10) | 1 : 1;
    char path[] = "/tmp/fanstore-meta-fuzz2-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        return 1;
    }
    static char buf[MAX_LEN];
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long iterations = 0, accepted = 0;
    unsigned long sink = 0;
    for (;;) {
        if ((iterations & 63) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            double elapsed = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
            if (elapsed >= seconds || (max_iterations > 0 && iterations >= max_iterations))
                break;
        }
        int pick = (int)(next() % (uint64_t)input_count);
        memcpy(buf, inputs[pick], lengths[pick]);
        size_t len = mutate(buf, lengths[pick]);
        if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, len, 0) != (ssize_t)len) {
            perror("write");
            return 1;
        }
        fs_table t;
        if (fs_table_open(path, &t) == 0) {
            accepted++;
            sink += walk(&t, inputs[pick], lengths[pick]);
            fs_table_close(&t);
        }
        iterations++;
    }
    close(fd);
    unlink(path);
    for (int i = 0; i < input_count; i++)
        free(inputs[i]);
    printf("meta-table fuzz: %ld mutated tables from %d inputs in %.0f s, %ld accepted and walked (checksum %lu)\n",
           iterations, input_count, seconds, accepted, sink);
    return 0;
}
