// link: cache_view.c
// valgrind: yes
/* cache_view.h against the golden image tests/vectors/cache/cache-ref-3.bin (ReferenceBitsTest checks that the
 * runtime writes the same bytes): the threshold is read from the trailer, an entry's path follows its size
 * (below: the tmpfs cache, from the threshold on: the local cache beside the table's local root), a touch sets
 * its byte, and a file of another length (the old format without trailer, another table) is refused. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache_view.h"

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } \
    while (0)

static size_t copy_golden(const char *to, size_t keep)
{
    const char *repo = getenv("FANSTORE_REPO");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/vectors/cache/cache-ref-3.bin", repo ? repo : "..");
    unsigned char buf[64];
    FILE *in = fopen(path, "rb");
    if (in == NULL) {
        perror(path);
        exit(1);
    }
    size_t n = fread(buf, 1, sizeof buf, in);
    fclose(in);
    FILE *out = fopen(to, "wb");
    if (out == NULL || fwrite(buf, 1, keep < n ? keep : n, out) != (keep < n ? keep : n) || fclose(out) != 0) {
        perror(to);
        exit(1);
    }
    return n;
}

static void expect_path(const fs_cache *c, uint32_t idx, uint64_t size, const char *want)
{
    char got[PATH_MAX];
    int rc = fs_cache_path(c, idx, size, got, sizeof got);
    CHECK(rc == 0 && strcmp(got, want) == 0, "entry %u of %llu bytes: rc %d, '%s', want '%s'", idx,
          (unsigned long long)size, rc, rc == 0 ? got : "", want);
}

int main(void)
{
    char dir[] = "/tmp/test_cache_view.XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    char ref[PATH_MAX], root[PATH_MAX], want[PATH_MAX];
    snprintf(ref, sizeof ref, "%s/cache.ref", dir);
    snprintf(root, sizeof root, "%s/local/rank-0/files", dir);
    size_t len = copy_golden(ref, 64);
    CHECK(len == 3 + 8, "golden image is %zu bytes, want 3 entries + 8", len);

    fs_cache c;
    int rc = fs_cache_attach(&c, dir, 3, root, strlen(root));
    CHECK(rc == 0, "attach: %d", rc);
    if (rc == 0) {
        CHECK(c.local_min == 1u << 20, "threshold %llu, want 1 MiB", (unsigned long long)c.local_min);
        snprintf(want, sizeof want, "%s/cache/e2", dir);
        expect_path(&c, 2, (1u << 20) - 1, want);
        expect_path(&c, 2, 0, want);
        snprintf(want, sizeof want, "%s/local/rank-0/cache/e2", dir);
        expect_path(&c, 2, 1u << 20, want);
        expect_path(&c, 2, UINT64_MAX, want);
        char buf[PATH_MAX];
        CHECK(fs_cache_path(&c, 3, 0, buf, sizeof buf) == -ERANGE, "index past the table");
        fs_cache_touch(&c, 1);
        CHECK(c.ref[0] == 0 && c.ref[1] == 1 && c.ref[2] == 0, "touch sets byte 1 only");
        fs_cache_detach(&c);
    }

    /* No local root (a table without local files): every entry stays in the tmpfs cache. */
    copy_golden(ref, 64);
    rc = fs_cache_attach(&c, dir, 3, "", 0);
    CHECK(rc == 0, "attach without local root: %d", rc);
    if (rc == 0) {
        snprintf(want, sizeof want, "%s/cache/e0", dir);
        expect_path(&c, 0, 8u << 20, want);
        fs_cache_detach(&c);
    }

    rc = fs_cache_attach(&c, dir, 4, root, strlen(root));
    CHECK(rc == -EPROTO && c.ref == NULL, "another table's entry count: %d", rc);
    copy_golden(ref, 3);   /* the format before the trailer: one byte per entry, nothing else */
    rc = fs_cache_attach(&c, dir, 3, root, strlen(root));
    CHECK(rc == -EPROTO && c.ref == NULL, "no trailer: %d", rc);

    unlink(ref);
    rmdir(dir);
    if (failures == 0)
        printf("cache_view: golden image, paths by size, refusals ok\n");
    return failures == 0 ? 0 : 1;
}
