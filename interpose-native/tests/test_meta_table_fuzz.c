// link: meta_table.c
// cflags: -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
/* Bounded fuzz of the metadata-table reader (issue 10): every table in tests/vectors/metadata, mutated at random
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

#include "meta_table.h"

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
    while ((de = readdir(d)) != NULL && input_count < MAX_INPUTS) {
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
    unsigned long sum = 0;
    for (uint64_t i = 0; i < t->entry_count; i++) {
        const fs_entry *e = fs_table_entry(t, (uint32_t)i);
        size_t n;
        const char *name = fs_entry_name(t, e, &n);
        sum += n ? (unsigned char)name[n - 1] : 0;
        sum += (uint64_t)fs_table_lookup(t, fs_entry_key(t, e), e->key_len);
        sum += fs_table_entry(t, e->parent)->mode;
        if (S_ISDIR(e->mode))
            for (uint32_t k = 0; k < e->child_count; k++)
                sum += fs_table_entry(t, t->children[e->first_child + k])->key_len;
        if (S_ISLNK(e->mode))
            sum += strlen(fs_entry_link_target(t, e));
    }
    for (size_t off = 0; off + 16 <= original_len; off += 37)
        sum += (uint64_t)fs_table_lookup(t, original + off, 1 + off % 16);
    return sum;
}

int main(void)
{
    const char *repo = getenv("FANSTORE_REPO");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/vectors/metadata", repo ? repo : "..");
    load(dir);
    if (input_count == 0) {
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
