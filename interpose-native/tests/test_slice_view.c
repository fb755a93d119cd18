// link: slice_view.c
// valgrind: yes
/* slice_view against the golden image tests/vectors/slices/slices-map-1.bin (values listed in its README.md), and the
 * refusals: another length, entry count, magic or version makes the view unusable (no slices, never a misread). */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "slice_view.h"

static unsigned char golden[4096];
static size_t golden_len;

static void load(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/vectors/slices/slices-map-1.bin", getenv("FANSTORE_REPO"));
    FILE *f = fopen(path, "rb");
    assert(f != NULL);
    golden_len = fread(golden, 1, sizeof golden, f);
    fclose(f);
    assert(golden_len == 864);
}

static void expect(const fs_slices *v, uint32_t idx, const char *want_path, uint64_t want_off)
{
    const char *p;
    size_t len;
    uint64_t off;
    int got = fs_slices_lookup(v, idx, &p, &len, &off);
    if (want_path == NULL) {
        assert(got == 0);
        return;
    }
    assert(got == 1);
    assert(len == strlen(want_path) && memcmp(p, want_path, len) == 0);
    assert(off == want_off);
}

int main(void)
{
    load();
    fs_slices v;
    assert(fs_slices_view(&v, golden, golden_len, 4) == 0);
    assert(v.slots == 3 && v.entries == 4);
    expect(&v, 0, NULL, 0);
    expect(&v, 1, "/l/parts/p0.fsp", 4096);
    expect(&v, 2, NULL, 0);
    expect(&v, 3, "/l/parts/b0.fsp", 123456789012ull);
    expect(&v, 4, NULL, 0);            /* outside the table */

    /* Refusals. */
    assert(fs_slices_view(&v, golden, golden_len, 5) == -EPROTO);       /* another table */
    assert(v.base == NULL);
    expect(&v, 1, NULL, 0);                                              /* an unusable view answers "no slice" */
    assert(fs_slices_view(&v, golden, golden_len - 1, 4) == -EPROTO);   /* another length */
    unsigned char bad[4096];
    memcpy(bad, golden, golden_len);
    bad[0] = 'X';
    assert(fs_slices_view(&v, bad, golden_len, 4) == -EPROTO);          /* magic */
    memcpy(bad, golden, golden_len);
    bad[8] = 2;
    assert(fs_slices_view(&v, bad, golden_len, 4) == -EPROTO);          /* version */

    /* A slot word pointing past the slots, or a slot whose length is out of range: no slice. */
    memcpy(bad, golden, golden_len);
    bad[32 + 3 * 256 + 16 * 1] = 9;
    assert(fs_slices_view(&v, bad, golden_len, 4) == 0);
    expect(&v, 1, NULL, 0);
    memcpy(bad, golden, golden_len);
    bad[32] = 253;
    assert(fs_slices_view(&v, bad, golden_len, 4) == 0);
    expect(&v, 1, NULL, 0);

    /* Attach from a rank directory. */
    char dir[] = "/tmp/slice-view-XXXXXX";
    assert(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/slices.map", dir);
    FILE *f = fopen(path, "wb");
    assert(f != NULL && fwrite(golden, 1, golden_len, f) == golden_len);
    fclose(f);
    assert(fs_slices_attach(&v, dir, 4) == 0);
    expect(&v, 3, "/l/parts/b0.fsp", 123456789012ull);
    fs_slices_detach(&v);
    assert(fs_slices_attach(&v, dir, 7) == -EPROTO);
    unlink(path);
    assert(fs_slices_attach(&v, dir, 4) == -ENOENT);
    rmdir(dir);
    printf("slice view: golden image, refusals and attach ok\n");
    return 0;
}
