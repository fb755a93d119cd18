// link: shim_counters.c
// valgrind: yes
/* shim_counters.h against the golden image tests/vectors/stats/shim-counters.bin (the runtime's Java reader
 * checks the same bytes): the struct reads the generator's values, an open adds to the right words, and a file
 * of another length, magic or version is refused with -EPROTO, leaving nothing mapped. */
#include "shim_counters.h"
#include "rank_dir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static unsigned char golden[64];
static char dir[] = "/tmp/fs-counters-XXXXXX";
static char file[256];

/* Writes bytes as <dir>/shim.counters (mode 0600), as the runtime would. */
static void put(const unsigned char *bytes, size_t n)
{
    FILE *f = fopen(file, "wb");
    CHECK(f != NULL && fwrite(bytes, 1, n, f) == n, "cannot write %s", file);
    if (f != NULL)
        fclose(f);
    chmod(file, 0600);
}

static uint64_t word_at(const unsigned char *b, size_t off)
{
    uint64_t v;
    memcpy(&v, b + off, 8);
    return v;
}

int main(void)
{
    const char *repo = getenv("FANSTORE_REPO");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/vectors/stats/shim-counters.bin", repo ? repo : "..");
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL && fread(golden, 1, sizeof golden, f) == sizeof golden, "cannot read %s", path);
    if (f == NULL)
        return 1;
    fclose(f);
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(file, sizeof file, "%s/" FS_RANK_SHIM_COUNTERS, dir);

    put(golden, sizeof golden);
    fs_counters *c = NULL;
    CHECK(fs_counters_attach(&c, dir) == 0 && c != NULL, "the golden image attaches");
    if (c != NULL) {
        CHECK(c->value[FS_CTR_LOCAL_OPENS] == 3, "local opens %llu", (unsigned long long)c->value[FS_CTR_LOCAL_OPENS]);
        CHECK(c->value[FS_CTR_LOCAL_BYTES] == 0x0102030405060708ull, "local bytes");
        CHECK(c->value[FS_CTR_CACHE_OPENS] == 5, "cache opens");
        CHECK(c->value[FS_CTR_CACHE_BYTES] == 4096, "cache bytes");
        CHECK(c->value[FS_CTR_WAKE_NS] == 1500000 && c->value[FS_CTR_WAKES] == 25, "wake-up sum and count");
        fs_counters_open(c, FS_CTR_CACHE_OPENS, 100);
        fs_counters_open(c, FS_CTR_LOCAL_OPENS, 7);
        fs_counters_detach(c);
    }
    unsigned char after[64];
    f = fopen(file, "rb");
    CHECK(f != NULL && fread(after, 1, sizeof after, f) == sizeof after, "reread");
    if (f != NULL)
        fclose(f);
    CHECK(memcmp(after, golden, 16) == 0, "header untouched");
    CHECK(word_at(after, 16) == 4 && word_at(after, 24) == 0x0102030405060708ull + 7, "local pair at 16/24");
    CHECK(word_at(after, 32) == 6 && word_at(after, 40) == 4196, "cache pair at 32/40");
    CHECK(memcmp(after + 48, golden + 48, 16) == 0, "wake-up pair untouched by opens");

    unsigned char bad[64];
    memcpy(bad, golden, 64);
    bad[0] = 'X';
    put(bad, 64);
    CHECK(fs_counters_attach(&c, dir) == -EPROTO && c == NULL, "bad magic refused");
    memcpy(bad, golden, 64);
    bad[8] = 1;  /* version 1: four counters and 16 reserved bytes */
    put(bad, 64);
    CHECK(fs_counters_attach(&c, dir) == -EPROTO && c == NULL, "other version refused");
    put(golden, 48);
    CHECK(fs_counters_attach(&c, dir) == -EPROTO && c == NULL, "short file refused");
    unlink(file);
    CHECK(fs_counters_attach(&c, dir) == -ENOENT && c == NULL, "missing file: -ENOENT");
    rmdir(dir);
    if (failures == 0)
        printf("shim counters: golden image, offsets and refusals ok\n");
    return failures ? 1 : 0;
}
