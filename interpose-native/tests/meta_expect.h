/* meta_expect: the checks of a metadata table against an *.expect vector (tests/vectors/metadata), shared by
 * test_meta_table.c (basic.tbl) and test_meta_table_far.c (the sparse far.sparse table past 4 GiB). */
#ifndef FANSTORE_META_EXPECT_H
#define FANSTORE_META_EXPECT_H

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
    static char path[8192];
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


/* Value of a field that must be present (an empty string, which fails the comparison, when missing). */
static const char *need(const char *line, const char *name, char *buf, size_t cap)
{
    const char *v = field(line, name, buf, cap);
    CHECK(v != NULL, "no %s= in %s", name, line);
    if (v == NULL)
        buf[0] = '\0';
    return buf;
}

static void check_entry(const fs_table *t, const char *line)
{
    static char buf[8192], key[4096], want[8192], got[8192];
    size_t key_len = unhex(need(line, "key", buf, sizeof buf), key);
    int64_t idx = fs_table_lookup(t, key, key_len);
    CHECK(idx == atoll(need(line, "index", buf, sizeof buf)), "index %lld for %s", (long long)idx, line);
    if (idx < 0)
        return;
    const fs_entry *e = fs_table_entry(t, (uint32_t)idx);
    uint32_t mode = fs_entry_mode(t, e);
    CHECK(fs_fnv1a64(key, key_len) == strtoull(need(line, "hash", buf, sizeof buf), NULL, 16), "fnv: %s", line);
    CHECK(mode == strtoul(need(line, "mode", buf, sizeof buf), NULL, 8), "mode %o: %s", mode, line);
    CHECK(fs_entry_size(e) == strtoull(need(line, "size", buf, sizeof buf), NULL, 10), "size: %s", line);
    long long sec; unsigned nsec;
    CHECK(sscanf(need(line, "mtime", buf, sizeof buf), "%lld.%u", &sec, &nsec) == 2, "mtime: %s", line);
    int64_t got_sec;
    uint32_t got_nsec;
    fs_entry_mtime(e, &got_sec, &got_nsec);
    CHECK(got_sec == sec && got_nsec == nsec, "mtime %lld.%09u: %s", (long long)got_sec, got_nsec, line);
    CHECK(fs_entry_uid(t, e) == strtoul(need(line, "uid", buf, sizeof buf), NULL, 10), "uid: %s", line);
    CHECK(fs_entry_gid(t, e) == strtoul(need(line, "gid", buf, sizeof buf), NULL, 10), "gid: %s", line);
    CHECK(fs_entry_flags(e) == strtoul(need(line, "flags", buf, sizeof buf), NULL, 10), "flags %u: %s",
          fs_entry_flags(e), line);
    CHECK(fs_entry_partition(t, e) == (int32_t)strtol(need(line, "partition", buf, sizeof buf), NULL, 10),
          "partition: %s", line);
    CHECK(fs_entry_local_raw(t, e) == (int)strtol(need(line, "local_raw", buf, sizeof buf), NULL, 10),
          "local raw: %s", line);
    CHECK(fs_entry_parent(e) == strtoul(need(line, "parent", buf, sizeof buf), NULL, 10), "parent: %s", line);
    CHECK(fs_entry_name_len(e) == unhex(need(line, "stored", buf, sizeof buf), want) &&
          (idx == 0 || memcmp(fs_entry_stored(t, e), want, fs_entry_name_len(e)) == 0), "stored name: %s", line);
    /* The key rebuilt from the names along the parent chain, and the name in its (one or two) pieces. */
    ssize_t klen = fs_table_key(t, (uint32_t)idx, got, sizeof got);
    CHECK(klen == (ssize_t)key_len && memcmp(got, key, key_len) == 0 && got[klen] == '\0', "key bytes: %s", line);
    CHECK(key_len == 0 || fs_table_key(t, (uint32_t)idx, got, key_len) == -ENAMETOOLONG, "key of a short buffer");
    fs_name name;
    fs_entry_name(t, e, &name);
    const char *slash = memrchr(key, '/', key_len);
    size_t last = slash ? (size_t)(slash + 1 - key) : 0;
    CHECK(name.head_len + name.tail_len == key_len - last && memcmp(name.head, key + last, name.head_len) == 0 &&
          memcmp(name.tail, key + last + name.head_len, name.tail_len) == 0, "name pieces: %s", line);
    if (S_ISREG(mode)) {
        CHECK(fs_file_body_offset(e) == strtoull(need(line, "body_offset", buf, sizeof buf), NULL, 10), "body: %s", line);
        CHECK(fs_file_stored_len(e) == strtoull(need(line, "stored_length", buf, sizeof buf), NULL, 10),
              "stored length: %s", line);
        CHECK(fs_file_crc(e) == strtoul(need(line, "body_crc", buf, sizeof buf), NULL, 16), "body crc: %s", line);
    }

    need(line, "children", want, sizeof want);
    if (S_ISDIR(mode)) {
        got[0] = '\0';
        for (uint32_t k = 0; k < fs_dir_count(e); k++) {
            uint32_t c = fs_dir_first(e) + k;
            fs_entry_name(t, fs_table_entry(t, c), &name);
            CHECK(fs_entry_parent(fs_table_entry(t, c)) == (uint32_t)idx, "child's parent: %s", line);
            if (k > 0)
                strcat(got, ",");
            hex(name.head, name.head_len, got + strlen(got));
            hex(name.tail, name.tail_len, got + strlen(got));
        }
        CHECK(strcmp(got, want) == 0, "children %s: %s", got, line);
    } else {
        CHECK(strcmp(want, "-") == 0, "children of a non-directory: %s", line);
    }

    need(line, "target", want, sizeof want);
    if (S_ISLNK(mode)) {
        hex(fs_entry_link_target(t, e), (size_t)fs_entry_size(e), got);
        CHECK(strcmp(got, want) == 0, "target %s: %s", got, line);
    } else {
        CHECK(strcmp(want, "-") == 0, "target of a non-symlink: %s", line);
    }
}

static void check_header(const fs_table *t, const char *line)
{
    static char buf[8192], root[4096];
    CHECK(t->entry_count == strtoull(need(line, "entries", buf, sizeof buf), NULL, 10), "entries");
    CHECK(t->bucket_count == strtoull(need(line, "buckets", buf, sizeof buf), NULL, 10), "buckets");
    CHECK(t->attr_count == strtoull(need(line, "attributes", buf, sizeof buf), NULL, 10), "attributes");
    CHECK(t->rank == strtoul(need(line, "rank", buf, sizeof buf), NULL, 10), "rank");
    CHECK(t->world_size == strtoul(need(line, "world", buf, sizeof buf), NULL, 10), "world");
    CHECK(t->st_dev == strtoul(need(line, "st_dev", buf, sizeof buf), NULL, 10), "st_dev");
    CHECK(t->generation == strtoull(need(line, "generation", buf, sizeof buf), NULL, 10), "generation");
    CHECK(t->length == strtoull(need(line, "total", buf, sizeof buf), NULL, 10), "total");
    CHECK(t->replicas == strtoul(need(line, "replicas", buf, sizeof buf), NULL, 10), "replicas");
    CHECK(t->partitions == strtoul(need(line, "partitions", buf, sizeof buf), NULL, 10), "partitions");
    CHECK(t->broadcast_partitions == strtoul(need(line, "broadcast", buf, sizeof buf), NULL, 10), "broadcast");
    /* The CRC covers the table as prep wrote it: [0, crc field) and [header end, table length); the job area is
     * this node's. The shim itself never sums the table (the runtime did, as it landed). */
    const fs_meta_header *h = (const fs_meta_header *)t->base;
    CHECK(h->table_len == strtoull(need(line, "table_len", buf, sizeof buf), NULL, 10), "table length");
    CHECK(h->dataset_id == strtoull(need(line, "dataset_id", buf, sizeof buf), NULL, 16), "dataset id");
    uint32_t want_crc = (uint32_t)strtoul(need(line, "crc", buf, sizeof buf), NULL, 16);
    CHECK(h->crc32c == want_crc, "recorded CRC32C %08x", h->crc32c);
    /* Summed here bit by bit (crc32c_ref.h): only small tables; the Java test sums the 4 GiB far vector. */
    if (h->table_len <= (64u << 20)) {
        uint32_t crc = crc32c(0, t->base, offsetof(fs_meta_header, crc32c));
        crc = crc32c(crc, t->base + FS_META_HEADER_SIZE, h->table_len - FS_META_HEADER_SIZE);
        CHECK(crc == want_crc, "table CRC32C %08x", crc);
    }
    size_t n = unhex(need(line, "local_root", buf, sizeof buf), root);
    CHECK(t->local_root_len == n && memcmp(t->local_root, root, n) == 0 && t->local_root[n] == '\0', "local root");
}

/* Checks every line of expect (a vector name) against an open table. */
static void check_expect(const fs_table *t, const char *expect)
{
    FILE *f = fopen(vector_path(expect), "r");
    CHECK(f != NULL, "%s", expect);
    if (f == NULL)
        return;
    char *line = NULL, buf[8192], key[4096];
    size_t cap = 0;
    int entries = 0, absent = 0;
    while (getline(&line, &cap, f) > 0) {
        if (strncmp(line, "header ", 7) == 0) {
            check_header(t, line);
        } else if (strncmp(line, "entry ", 6) == 0) {
            check_entry(t, line);
            entries++;
        } else if (strncmp(line, "absent ", 7) == 0) {
            size_t n = unhex(field(line, "key", buf, sizeof buf), key);
            CHECK(fs_table_lookup(t, key, n) == -1, "absent: %s", line);
            absent++;
        }
    }
    free(line);
    fclose(f);
    CHECK(entries == (int)t->entry_count && absent > 0, "expect lists %d entries, %d absent", entries, absent);
}

/* Opens tbl (a path) and checks every line of expect (a vector name) against it. */
static void __attribute__((unused)) check_vectors(const char *tbl, const char *expect)
{
    fs_table t;
    int rc = fs_table_open(tbl, &t);
    CHECK(rc == 0, "open %s: %d", tbl, rc);
    if (rc != 0)
        return;
    check_expect(&t, expect);
    fs_table_close(&t);
    CHECK(t.base == NULL, "close clears the table");
}

#endif
