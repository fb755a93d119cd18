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
    uint32_t want_crc = (uint32_t)strtoul(field(line, "crc", buf, sizeof buf), NULL, 16);
    CHECK(h->crc32c == want_crc, "recorded CRC32C %08x", h->crc32c);
    /* Summed here bit by bit (crc32c_ref.h): only small tables; the Java test sums the 4 GiB far vector. */
    if (h->table_len <= (64u << 20)) {
        uint32_t crc = crc32c(0, t->base, offsetof(fs_meta_header, crc32c));
        crc = crc32c(crc, t->base + FS_META_HEADER_SIZE, h->table_len - FS_META_HEADER_SIZE);
        CHECK(crc == want_crc, "table CRC32C %08x", crc);
    }
    size_t n = unhex(field(line, "local_root", buf, sizeof buf), root);
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
