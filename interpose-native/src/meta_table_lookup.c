/* meta_table_lookup: key -> entry (fs_table_lookup) and entry -> key (fs_table_key) over a validated table.
 * Format 3 stores no keys and no hashes: a key's home bucket comes from its FNV-1a 64 hash, and a candidate entry
 * is verified component by component up its parent chain (lengths first: they are in the entries; bytes only when
 * they agree; the candidate's own name, the one cold line, last). A name that extends its parent's (NAME_EXTENDS_PARENT) is checked against the key itself: its
 * component must start with the key's previous component, which the next step verifies against the parent.
 * Reads only what validation bounded (meta_table.c): no allocation, no system call, no errno change. */
#include "meta_table.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define FNV_OFFSET_BASIS 0xcbf29ce484222325ull
#define FNV_PRIME        0x100000001b3ull

uint64_t fs_fnv1a64(const char *key, size_t len)
{
    uint64_t h = FNV_OFFSET_BASIS;
    for (size_t i = 0; i < len; i++) {
        h ^= (uint8_t)key[i];
        h *= FNV_PRIME;
    }
    return h;
}

/* Start of the last component of key[0, len): one past the last '/', or 0 (components are short: a plain loop). */
static inline size_t component_start(const char *key, size_t len)
{
    while (len > 0 && key[len - 1] != '/')
        len--;
    return len;
}

/* a[0, n) == b[0, n), inline: names are short, a libc call per compare cost more than the compare. */
static inline int bytes_equal(const char *a, const char *b, size_t n)
{
    for (; n >= 8; a += 8, b += 8, n -= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y)
            return 0;
    }
    for (; n > 0; n--)
        if (*a++ != *b++)
            return 0;
    return 1;
}

/* Lengths of one level: whether entry e's full name can be key[comp, len). Sets *head (bytes of the parent's name
 * that the key's component starts with, when e's name extends its parent's) and *up (start of the key's previous
 * component, or SIZE_MAX when it was not needed yet). Touches only the entry and the key. */
static int lengths_match(const fs_entry *e, const char *key, size_t len, size_t comp, size_t *head, size_t *up)
{
    size_t stored = fs_entry_name_len(e), clen = len - comp;
    *head = 0;
    *up = SIZE_MAX;
    if (fs_entry_flags(e) & FS_ENTRY_NAME_EXTENDS) {
        /* Full name = the parent's name + stored: the key's component = its previous component + stored. */
        if (comp == 0)
            return 0;
        *up = component_start(key, comp - 1);
        *head = comp - 1 - *up;
        return clen == *head + stored && bytes_equal(key + comp, key + *up, *head);
    }
    return clen == stored;
}

/* Whether entry idx has key key[0, len), whose last component starts at comp: each level's name, then its parent. */
static int chain_matches(const fs_table *t, uint32_t idx, const char *key, size_t len, size_t comp)
{
    for (;;) {
        if (idx == 0)
            return len == 0;
        if (len == 0)
            return 0;
        const fs_entry *e = fs_table_entry(t, idx);
        size_t head, up;
        if (!lengths_match(e, key, len, comp, &head, &up) ||
            !bytes_equal(key + comp + head, fs_entry_stored(t, e), fs_entry_name_len(e)))
            return 0;
        if (comp == 0)
            return fs_entry_parent(e) == 0;
        idx = fs_entry_parent(e);
        len = comp - 1;
        comp = up != SIZE_MAX ? up : component_start(key, len);
    }
}

/* Both cache lines of an entry (44 bytes at a 4-aligned place: most straddle two lines), asked for early. */
static inline void prefetch_entry(const fs_table *t, uint32_t b)
{
    const fs_entry *e = &t->entries[b - 1];
    __builtin_prefetch(e);
    __builtin_prefetch(e->b + FS_META_ENTRY_SIZE - 1);
}

int64_t fs_table_lookup(const fs_table *t, const char *key, size_t len)
{
    const uint64_t h = fs_fnv1a64(key, len);
    const uint64_t n = t->bucket_count;
    const uint32_t *buckets = t->buckets;
    const size_t comp = component_start(key, len);
    /* A parent already verified against the key's directory part: a later candidate under it skips that walk. */
    uint32_t verified = UINT32_MAX;
    /* Home bucket: the high 64 bits of h * B (unsigned 128-bit product), uniform over [0, B). */
    uint64_t i = (uint64_t)(((unsigned __int128)h * n) >> 64);
    uint32_t b = buckets[i];
    if (b != 0)
        prefetch_entry(t, b);
    /* Validation guarantees an empty bucket exists; the probe bound is a second line of defence. */
    for (uint64_t probes = 0; probes < n && b != 0; probes++) {
        /* The next candidate's entry is fetched while this one is checked (misses overlap, not add up). */
        if (++i == n)
            i = 0;
        uint32_t next = buckets[i];
        if (next != 0)
            prefetch_entry(t, next);
        uint32_t idx = b - 1;
        b = next;
        if (idx == 0) {
            if (len == 0)
                return 0;
            continue;
        }
        /* Lengths first (in the entry); then the directory part, whose entries and names are few and warm, and a
         * candidate under another directory (almost every wrong one) fails there; the stored name (a cold line of
         * the names section, fetched meanwhile) last. */
        const fs_entry *e = fs_table_entry(t, idx);
        size_t head, up;
        if (!lengths_match(e, key, len, comp, &head, &up))
            continue;
        const char *stored = fs_entry_stored(t, e);
        __builtin_prefetch(stored);
        uint32_t parent = fs_entry_parent(e);
        if (comp == 0) {
            if (parent != 0)
                continue;
        } else if (parent != verified) {
            if (!chain_matches(t, parent, key, comp - 1, up != SIZE_MAX ? up : component_start(key, comp - 1)))
                continue;
            verified = parent;
        }
        if (bytes_equal(key + comp + head, stored, fs_entry_name_len(e)))
            return (int64_t)idx;
    }
    return -1;
}

ssize_t fs_table_key(const fs_table *t, uint32_t idx, char *buf, size_t cap)
{
    /* First the length (names along the chain, a '/' between), then the bytes from the end backwards. */
    size_t len = 0;
    for (uint32_t i = idx; i != 0; i = fs_entry_parent(fs_table_entry(t, i))) {
        fs_name n;
        fs_entry_name(t, fs_table_entry(t, i), &n);
        len += (size_t)n.head_len + n.tail_len;
        if (fs_entry_parent(fs_table_entry(t, i)) != 0)
            len++;
    }
    if (len >= cap)
        return -ENAMETOOLONG;
    buf[len] = '\0';
    size_t at = len;
    for (uint32_t i = idx; i != 0; i = fs_entry_parent(fs_table_entry(t, i))) {
        fs_name n;
        fs_entry_name(t, fs_table_entry(t, i), &n);
        at -= n.tail_len;
        memcpy(buf + at, n.tail, n.tail_len);
        at -= n.head_len;
        memcpy(buf + at, n.head, n.head_len);
        if (fs_entry_parent(fs_table_entry(t, i)) != 0)
            buf[--at] = '/';
    }
    return (ssize_t)len;
}
