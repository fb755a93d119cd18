// link: meta_table.c
// valgrind: yes
/* meta_table reader against the shared vectors (tests/vectors/metadata): every lookup basic.expect lists,
 * every malformed table refused with -EINVAL, then random byte flips of a valid table: open either refuses the
 * copy or every lookup and walk on it stays inside the mapping (valgrind checks the latter when run under it). */
#include "meta_table.h"
#include "crc32c_ref.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static char vectors[4096];

static const char *vector_path(const char *name)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/%s", vectors, name);
    return path;
}

/* Value of field name= in a space-separated line, copied into buf; NULL when absent. */
static const char *field(const char *line, const char *name, char *buf, size_t cap)
{
    size_t n = strlen(name);
    for (const char *p = line; (p = strstr(p, name)) != NULL; p += n) {
        if ((p == line || p[-1] == ' ') && p[n] == '=') {
            const char *v = p + n + 1;
            size_t len = strcspn(v, " \n");
            if (len >= cap)
                len = cap - 1;
            memcpy(buf, v, len);
            buf[len] = '\0';
            return buf;
        }
    }
    return NULL;
}

static size_t unhex(const char *hex, char *out)
{
    size_t n = 0;
    for (; hex[0] && hex[1]; hex += 2) {
        unsigned v;
        sscanf(hex, "%2x", &v);
        out[n++] = (char)v;
    }
    return n;
}

static void hex(const char *bytes, size_t len, char *out)
{
    for (size_t i = 0; i < len; i++)
        sprintf(out + 2 * i, "%02x", (unsigned char)bytes[i]);
    out[2 * len] = '\0';
}


static void test_fnv_reference_values(void)
{
    /* Published FNV-1a 64 test values. */
    CHECK(fs_fnv1a64("", 0) == 0xcbf29ce484222325ull, "fnv(\"\")");
    CHECK(fs_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull, "fnv(\"a\")");
    CHECK(fs_fnv1a64("foobar", 6) == 0x85944171f73967e8ull, "fnv(\"foobar\")");
}

static void check_entry(const fs_table *t, const char *line)
{
    static char buf[8192], key[4096], want[8192], got[8192];
    size_t key_len = unhex(field(line, "key", buf, sizeof buf), key);
    int64_t idx = fs_table_lookup(t, key, key_len);
    CHECK(idx == atoll(field(line, "index", buf, sizeof buf)), "index %lld for %s", (long long)idx, line);
    if (idx < 0)
        return;
    const fs_entry *e = fs_table_entry(t, (uint32_t)idx);
    CHECK(e->hash == strtoull(field(line, "hash", buf, sizeof buf), NULL, 16), "hash: %s", line);
    CHECK(fs_fnv1a64(key, key_len) == e->hash, "fs_fnv1a64: %s", line);
    CHECK(e->mode == strtoul(field(line, "mode", buf, sizeof buf), NULL, 8), "mode %o: %s", e->mode, line);
    CHECK(e->size == strtoull(field(line, "size", buf, sizeof buf), NULL, 10), "size: %s", line);
    long long sec; unsigned nsec;
    sscanf(field(line, "mtime", buf, sizeof buf), "%lld.%u", &sec, &nsec);
    CHECK(e->mtime_sec == sec && e->mtime_nsec == nsec, "mtime: %s", line);
    CHECK(e->uid == strtoul(field(line, "uid", buf, sizeof buf), NULL, 10), "uid: %s", line);
    CHECK(e->gid == strtoul(field(line, "gid", buf, sizeof buf), NULL, 10), "gid: %s", line);
    CHECK(e->flags == strtoul(field(line, "flags", buf, sizeof buf), NULL, 10), "flags: %s", line);
    CHECK(e->partition == (int32_t)strtol(field(line, "partition", buf, sizeof buf), NULL, 10), "partition: %s", line);
    CHECK(fs_entry_local_raw(t, e) == (int)strtol(field(line, "local_raw", buf, sizeof buf), NULL, 10),
          "local raw: %s", line);
    CHECK(e->parent == strtoul(field(line, "parent", buf, sizeof buf), NULL, 10), "parent: %s", line);
    CHECK(e->key_len == key_len && memcmp(fs_entry_key(t, e), key, key_len) == 0, "key bytes: %s", line);

    field(line, "children", want, sizeof want);
    if (S_ISDIR(e->mode)) {
        got[0] = '\0';
        for (uint32_t k = 0; k < e->child_count; k++) {
            uint32_t c = t->children[e->first_child + k];
            size_t name_len;
            const char *name = fs_entry_name(t, fs_table_entry(t, c), &name_len);
            CHECK(fs_table_entry(t, c)->parent == (uint32_t)idx, "child's parent: %s", line);
            if (k > 0)
                strcat(got, ",");
            hex(name, name_len, got + strlen(got));
        }
        CHECK(strcmp(got, want) == 0, "children %s: %s", got, line);
    } else {
        CHECK(strcmp(want, "-") == 0, "children of a non-directory: %s", line);
    }

    field(line, "target", want, sizeof want);
    if (S_ISLNK(e->mode)) {
        hex(fs_entry_link_target(t, e), e->child_count, got);
        CHECK(strcmp(got, want) == 0, "target %s: %s", got, line);
        CHECK(strlen(fs_entry_link_target(t, e)) == e->child_count, "target NUL: %s", line);
    } else {
        CHECK(strcmp(want, "-") == 0, "target of a non-symlink: %s", line);
    }
}

static void check_header(const fs_table *t, const char *line)
{
    static char buf[8192], root[4096];
    CHECK(t->entry_count == strtoull(field(line, "entries", buf, sizeof buf), NULL, 10), "entries");
    CHECK(t->bucket_mask + 1 == strtoull(field(line, "buckets", buf, sizeof buf), NULL, 10), "buckets");
    CHECK(t->rank == strtoul(field(line, "rank", buf, sizeof buf), NULL, 10), "rank");
    CHECK(t->world_size == strtoul(field(line, "world", buf, sizeof buf), NULL, 10), "world");
    CHECK(t->st_dev == strtoul(field(line, "st_dev", buf, sizeof buf), NULL, 10), "st_dev");
    CHECK(t->generation == strtoull(field(line, "generation", buf, sizeof buf), NULL, 10), "generation");
    CHECK(t->length == strtoull(field(line, "total", buf, sizeof buf), NULL, 10), "total");
    CHECK(t->replicas == strtoul(field(line, "replicas", buf, sizeof buf), NULL, 10), "replicas");
    /* The CRC covers the table as prep wrote it: [0, crc field) and [header end, table length); the job area is
     * this node's. The shim itself never sums the table (the runtime did, as it landed). */
    const fs_meta_header *h = (const fs_meta_header *)t->base;
    CHECK(h->table_len == strtoull(field(line, "table_len", buf, sizeof buf), NULL, 10), "table length");
    uint32_t crc = crc32c(0, t->base, offsetof(fs_meta_header, crc32c));
    crc = crc32c(crc, t->base + FS_META_HEADER_SIZE, h->table_len - FS_META_HEADER_SIZE);
    CHECK(crc == h->crc32c && crc == (uint32_t)strtoul(field(line, "crc", buf, sizeof buf), NULL, 16),
          "table CRC32C %08x", crc);
    size_t n = unhex(field(line, "local_root", buf, sizeof buf), root);
    CHECK(t->local_root_len == n && memcmp(t->local_root, root, n) == 0 && t->local_root[n] == '\0', "local root");
}

static void test_basic_vectors(void)
{
    fs_table t;
    int rc = fs_table_open(vector_path("basic.tbl"), &t);
    CHECK(rc == 0, "open basic.tbl: %d", rc);
    if (rc != 0)
        return;
    FILE *f = fopen(vector_path("basic.expect"), "r");
    CHECK(f != NULL, "basic.expect");
    if (f == NULL) {
        fs_table_close(&t);
        return;
    }
    char *line = NULL, buf[8192], key[4096];
    size_t cap = 0;
    int entries = 0, absent = 0;
    while (getline(&line, &cap, f) > 0) {
        if (strncmp(line, "header ", 7) == 0) {
            check_header(&t, line);
        } else if (strncmp(line, "entry ", 6) == 0) {
            check_entry(&t, line);
            entries++;
        } else if (strncmp(line, "absent ", 7) == 0) {
            size_t n = unhex(field(line, "key", buf, sizeof buf), key);
            CHECK(fs_table_lookup(&t, key, n) == -1, "absent: %s", line);
            absent++;
        }
    }
    free(line);
    fclose(f);
    CHECK(entries == (int)t.entry_count && absent > 0, "expect lists %d entries, %d absent", entries, absent);
    fs_table_close(&t);
    CHECK(t.base == NULL, "close clears the table");
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

/* A table from a build whose fs_entry grew to 80 bytes: only its version word says so, and that is enough. */
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
    CHECK(FS_META_VERSION == ((2u << 24) | (sizeof(fs_entry) << 8) | sizeof(fs_meta_header)), "version word");
}

static void test_open_errors_keep_errno(void)
{
    fs_table t;
    errno = EXDEV;
    CHECK(fs_table_open(vector_path("no-such-table.tbl"), &t) == -ENOENT, "missing file is -ENOENT");
    CHECK(errno == EXDEV, "caller's errno preserved");
    CHECK(fs_table_open(vectors, &t) == -EINVAL, "a directory is -EINVAL");
}

/* Everything a shim does with an open table, over every entry: must stay inside the mapping. */
static unsigned long walk_everything(const fs_table *t, const char *original, size_t original_len)
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
    /* Keys that are not in the table: substrings of the original file, so probes hit real hashes too. */
    for (size_t off = 0; off + 16 <= original_len; off += 61)
        sum += (uint64_t)fs_table_lookup(t, original + off, 1 + off % 16);
    return sum;
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
