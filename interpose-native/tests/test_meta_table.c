// link: meta_table.c meta_table_lookup.c
// valgrind: yes
/* meta_table reader against the shared vectors (tests/vectors/metadata): every lookup basic.expect lists,
 * every malformed table refused with -EINVAL, then random byte flips of a valid table: open either refuses the
 * copy or every lookup and walk on it stays inside the mapping (valgrind checks the latter when run under it). */
#include "meta_expect.h"
#include "meta_walk.h"

static void test_fnv_reference_values(void)
{
    /* Published FNV-1a 64 test values. */
    CHECK(fs_fnv1a64("", 0) == 0xcbf29ce484222325ull, "fnv(\"\")");
    CHECK(fs_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull, "fnv(\"a\")");
    CHECK(fs_fnv1a64("foobar", 6) == 0x85944171f73967e8ull, "fnv(\"foobar\")");
}


static void test_basic_vectors(void)
{
    check_vectors(vector_path("basic.tbl"), "basic.expect");
}

static void test_malformed_vectors(void)
{
    FILE *f = fopen(vector_path("malformed.expect"), "r");
    CHECK(f != NULL, "malformed.expect");
    if (f == NULL)
        return;
    char line[512], name[400];
    int refused = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "reject %399s", name) != 1)
            continue;
        fs_table t;
        int rc = fs_table_open(vector_path(name), &t);
        CHECK(rc == -EINVAL, "%s: open returned %d, want -EINVAL", name, rc);
        CHECK(t.base == NULL, "%s: refused table left mapped", name);
        if (rc == 0)
            fs_table_close(&t);
        refused++;
    }
    fclose(f);
    CHECK(refused >= 10, "malformed.expect lists %d tables", refused);
}

/* A table from a build whose entries grew to 80 bytes: only its version word says so, and that is enough. */
static void test_other_struct_sizes_refused(void)
{
    FILE *f = fopen(vector_path("entry-size-80.tbl"), "rb");
    CHECK(f != NULL, "entry-size-80.tbl");
    if (f == NULL)
        return;
    fs_meta_header h;
    CHECK(fread(&h, sizeof h, 1, f) == 1, "header");
    fclose(f);
    CHECK(h.version != FS_META_VERSION && ((h.version >> 8) & 0xffu) == 80u, "version word %#x", h.version);
    fs_table t;
    errno = EXDEV;
    CHECK(fs_table_open(vector_path("entry-size-80.tbl"), &t) == -EINVAL, "other entry size must be refused");
    CHECK(errno == EXDEV && t.base == NULL, "refused cleanly");
    CHECK(FS_META_VERSION == ((3u << 24) | (sizeof(fs_entry) << 8) | sizeof(fs_meta_header)), "version word");
}

static void test_open_errors_keep_errno(void)
{
    fs_table t;
    errno = EXDEV;
    CHECK(fs_table_open(vector_path("no-such-table.tbl"), &t) == -ENOENT, "missing file is -ENOENT");
    CHECK(errno == EXDEV, "caller's errno preserved");
    CHECK(fs_table_open(vectors, &t) == -EINVAL, "a directory is -EINVAL");
}

/* Everything a shim does with an open table, over every entry: must stay inside the mapping (meta_walk.h). */
static unsigned long walk_everything(const fs_table *t, const char *original, size_t original_len)
{
    return meta_walk(t, original, original_len, 61);
}

static void test_random_corruption(void)
{
    FILE *f = fopen(vector_path("basic.tbl"), "rb");
    CHECK(f != NULL, "basic.tbl");
    if (f == NULL)
        return;
    static char good[1 << 16], copy[1 << 16];
    size_t len = fread(good, 1, sizeof good, f);
    fclose(f);
    const char *env = getenv("FANSTORE_FUZZ_ITERATIONS");
    int iterations = env ? atoi(env) : 2000;
    char path[] = "/tmp/fanstore-meta-fuzz-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    srand(12345);
    int accepted = 0;
    unsigned long sink = 0;
    for (int it = 0; it < iterations; it++) {
        memcpy(copy, good, len);
        int flips = 1 + rand() % 4;
        for (int k = 0; k < flips; k++) {
            /* Half the flips land in the header and first entries, where the offsets live. */
            size_t at = (rand() % 2) ? (size_t)rand() % 400 : (size_t)rand() % len;
            copy[at] ^= (char)(1 + rand() % 255);
        }
        CHECK(pwrite(fd, copy, len, 0) == (ssize_t)len, "pwrite");
        fs_table t;
        if (fs_table_open(path, &t) == 0) {
            accepted++;
            sink += walk_everything(&t, good, len);
            fs_table_close(&t);
        }
    }
    close(fd);
    unlink(path);
    printf("corruption: %d of %d damaged copies still valid (walked, checksum %lu)\n", accepted, iterations, sink);
}

int main(void)
{
    const char *repo = getenv("FANSTORE_REPO");
    snprintf(vectors, sizeof vectors, "%s/tests/vectors/metadata", repo ? repo : "..");
    test_fnv_reference_values();
    test_basic_vectors();
    test_malformed_vectors();
    test_other_struct_sizes_refused();
    test_open_errors_keep_errno();
    test_random_corruption();
    if (failures)
        fprintf(stderr, "test_meta_table: %d failures\n", failures);
    return failures ? 1 : 0;
}
