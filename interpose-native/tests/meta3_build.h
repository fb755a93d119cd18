/* meta3_build: a second, independent writer of metadata tables in format 3 (the table README), for C tests and the
 * bench's converter (bench/table3_convert.c). The Java writer (MetadataTableWriter) is the reference and makes the
 * golden vectors; this one exists so the C reader is also tested on trees the vectors do not have (random names,
 * extended names, deep chains, many directories) and so the bench can convert a format-2 table of 14M entries.
 * Input: a tree of m3_node, node 0 the root "", each directory's children listed sorted by name bytes; each node's
 * key. Output: a landed table (job area filled: rank 0 of 1, generation 1, the given local root). Not the shim's
 * code: it allocates freely and stops the process on allocation failure. */
#ifndef FANSTORE_META3_BUILD_H
#define FANSTORE_META3_BUILD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "meta_table.h"

typedef struct m3_node {
    const char     *key;          /* full key, "" for the root */
    uint32_t        key_len;
    uint32_t        mode, uid, gid;
    int64_t         mtime_ns;
    uint64_t        size;         /* regular: st_size; symlink: target length (set by the builder) */
    uint32_t        flags;        /* UNPACKABLE / COMPRESSED (regular files only) */
    int32_t         partition;    /* regular files */
    uint64_t        body_offset;
    uint32_t        crc, stored;
    const char     *target;       /* symlinks */
    uint32_t        target_len;
    const uint32_t *children;     /* directories: node numbers, sorted by name bytes */
    uint32_t        child_count;
} m3_node;

typedef struct m3_out {
    unsigned char *bytes;
    size_t         len;           /* landed length (table + trailer) */
    uint64_t       table_len;
} m3_out;

static void *m3_alloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "meta3_build: out of memory (%zu bytes)\n", n);
        abort();
    }
    return p;
}

static const char *m3_name(const m3_node *n, uint32_t *len)
{
    const char *slash = n->key_len ? memrchr(n->key, '/', n->key_len) : NULL;
    const char *name = slash ? slash + 1 : n->key;
    *len = (uint32_t)(n->key + n->key_len - name);
    return name;
}

static void m3_put(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t m3_align8(uint64_t v) { return (v + 7) & ~(uint64_t)7; }

/* Header values the caller chooses (a converted table keeps its source's). */
typedef struct m3_header {
    uint32_t partitions, broadcast, st_dev;
    uint64_t dataset_id;
} m3_header;

/* Builds the landed table of nodes[0, count); crc: sum the table (bit by bit: slow past ~100 MB). */
static m3_out m3_build(const m3_node *nodes, uint32_t count, m3_header hd, const char *local_root, int crc)
{
    /* Breadth-first order: old node number of each new index, and the reverse. */
    uint32_t *order = m3_alloc((size_t)count * sizeof *order), *index_of = m3_alloc((size_t)count * sizeof *index_of);
    uint32_t *parent = m3_alloc((size_t)count * sizeof *parent);
    uint32_t filled = 1;
    order[0] = 0;
    for (uint32_t i = 0; i < filled; i++) {
        const m3_node *d = &nodes[order[i]];
        index_of[order[i]] = i;
        for (uint32_t k = 0; S_ISDIR(d->mode) && k < d->child_count; k++) {
            parent[filled] = i;
            order[filled++] = d->children[k];
        }
    }
    if (filled != count) {
        fprintf(stderr, "meta3_build: %u of %u nodes reachable from the root\n", filled, count);
        abort();
    }
    /* Names: each directory's block of stored names (a symlink's target after its name). */
    uint64_t names_cap = 1024, names_len = 0;
    for (uint32_t i = 0; i < count; i++)
        names_cap += nodes[i].key_len + nodes[i].target_len;
    char *names = m3_alloc(names_cap);
    uint64_t *base = m3_alloc((size_t)count * sizeof *base), *name_off = m3_alloc((size_t)count * sizeof *name_off);
    uint8_t *stored_len = m3_alloc(count), *extends = m3_alloc(count);
    for (uint32_t i = 0; i < count; i++) {
        const m3_node *d = &nodes[order[i]];
        if (!S_ISDIR(d->mode) || d->child_count == 0)
            continue;
        base[i] = names_len;
        uint32_t dlen;
        const char *dname = m3_name(d, &dlen);
        for (uint32_t k = 0; k < d->child_count; k++) {
            uint32_t c = index_of[d->children[k]];
            const m3_node *cn = &nodes[d->children[k]];
            uint32_t clen;
            const char *cname = m3_name(cn, &clen);
            int ext = i != 0 && !extends[i] && dlen < clen && memcmp(cname, dname, dlen) == 0;
            extends[c] = (uint8_t)ext;
            const char *s = ext ? cname + dlen : cname;
            stored_len[c] = (uint8_t)(ext ? clen - dlen : clen);
            name_off[c] = names_len - base[i];
            memcpy(names + names_len, s, stored_len[c]);
            names_len += stored_len[c];
            if (S_ISLNK(cn->mode)) {
                memcpy(names + names_len, cn->target, cn->target_len);
                names_len += cn->target_len;
            }
        }
    }
    /* Attributes by first use in entry order. */
    uint32_t attr_count = 0, attr_cap = 16, last = 0;
    uint32_t (*attrs)[3] = m3_alloc(attr_cap * sizeof *attrs);
    uint16_t *attr_of = m3_alloc((size_t)count * sizeof *attr_of);
    for (uint32_t i = 0; i < count; i++) {
        const m3_node *n = &nodes[order[i]];
        uint32_t want[3] = { n->mode, n->uid, n->gid }, a = last;
        if (attr_count == 0 || memcmp(attrs[a], want, sizeof want) != 0) {
            for (a = 0; a < attr_count && memcmp(attrs[a], want, sizeof want) != 0; a++)
                ;
            if (a == attr_count) {
                if (attr_count == attr_cap) {
                    attr_cap *= 2;
                    attrs = realloc(attrs, attr_cap * sizeof *attrs);
                }
                memcpy(attrs[attr_count++], want, sizeof want);
            }
        }
        attr_of[i] = (uint16_t)(last = a);
    }
    /* Layout as the Java writer's: header, entries, attributes, buckets, names, then the job trailer (local root,
     * NUL, padding). */
    uint64_t E = count, B = E + (E * 3 + 4) / 5;
    uint64_t entries_off = FS_META_HEADER_SIZE, attrs_off = m3_align8(entries_off + E * FS_META_ENTRY_SIZE);
    uint64_t buckets_off = m3_align8(attrs_off + attr_count * 16ull), names_off = m3_align8(buckets_off + B * 4);
    uint64_t table_len = m3_align8(names_off + names_len);
    size_t root_len = strlen(local_root);
    m3_out out = { .table_len = table_len, .len = (size_t)m3_align8(table_len + root_len + 1) };
    unsigned char *t = out.bytes = m3_alloc(out.len);
    for (uint32_t i = 0; i < count; i++) {
        const m3_node *n = &nodes[order[i]];
        unsigned char *e = t + entries_off + (uint64_t)i * FS_META_ENTRY_SIZE;
        uint64_t size = S_ISDIR(n->mode) ? 4096 : S_ISLNK(n->mode) ? n->target_len : n->size;
        m3_put(e + FS_E_MTIME, (uint64_t)n->mtime_ns, 8);
        m3_put(e + FS_E_SIZE, size, 6);
        m3_put(e + FS_E_ATTR, attr_of[i], 2);
        m3_put(e + FS_E_PARENT, i ? parent[i] : 0, 4);
        m3_put(e + FS_E_NAME_OFF, name_off[i], 4);
        e[FS_E_NAME_LEN] = stored_len[i];
        e[FS_E_FLAGS] = (unsigned char)((S_ISREG(n->mode) ? n->flags : 0) | (extends[i] ? FS_ENTRY_NAME_EXTENDS : 0));
        if (S_ISREG(n->mode)) {
            m3_put(e + FS_E_BODY, n->body_offset, 6);
            m3_put(e + FS_E_PARTITION, (uint32_t)n->partition, 4);
            m3_put(e + FS_E_CRC, n->crc, 4);
            m3_put(e + FS_E_STORED, (n->flags & FS_ENTRY_COMPRESSED) ? n->stored : 0, 4);
        } else if (S_ISDIR(n->mode) && n->child_count > 0) {
            m3_put(e + FS_E_BODY, base[i], 6);
            m3_put(e + FS_E_PARTITION, index_of[n->children[0]], 4);
            m3_put(e + FS_E_CRC, n->child_count, 4);
        }
        /* Linear probing from the home bucket (high 64 bits of hash * B). */
        uint64_t h = fs_fnv1a64(n->key, n->key_len), b = (uint64_t)(((unsigned __int128)h * B) >> 64);
        uint32_t *buckets = (uint32_t *)(t + buckets_off);
        while (buckets[b] != 0)
            b = b + 1 == B ? 0 : b + 1;
        buckets[b] = i + 1;
    }
    for (uint32_t a = 0; a < attr_count; a++)
        for (int k = 0; k < 3; k++)
            m3_put(t + attrs_off + 16ull * a + 4 * k, attrs[a][k], 4);
    memcpy(t + names_off, names, names_len);
    memcpy(t, FS_META_MAGIC, 8);
    m3_put(t + 8, FS_META_VERSION, 4);
    m3_put(t + 12, FS_META_HEADER_SIZE, 4);
    uint64_t header[] = { E, B, entries_off, buckets_off, attrs_off, attr_count, names_off, names_len, 0, table_len,
                          hd.dataset_id };
    for (int k = 0; k < 11; k++)
        m3_put(t + 16 + 8 * k, header[k], 8);
    m3_put(t + 104, hd.partitions, 4);
    m3_put(t + 108, hd.broadcast, 4);
    m3_put(t + 112, hd.st_dev, 4);
#ifdef FANSTORE_CRC32C_REF_H
    if (crc)
        m3_put(t + 116, crc32c(crc32c(0, t, 116), t + FS_META_HEADER_SIZE, table_len - FS_META_HEADER_SIZE), 4);
#else
    (void)crc;
#endif
    /* Job area: rank 0 of 1, no replicas; local root in the trailer; generation 1. */
    m3_put(t + 124, 1, 4);
    m3_put(t + 136, table_len, 8);
    m3_put(t + 144, root_len, 4);
    m3_put(t + 152, 1, 8);
    memcpy(t + table_len, local_root, root_len);
    free(order), free(index_of), free(parent), free(names), free(base), free(name_off), free(stored_len);
    free(extends), free(attrs), free(attr_of);
    return out;
}

#endif
