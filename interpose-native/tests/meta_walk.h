/* meta_walk.h: everything a shim does with an open table, over every entry (names, keys rebuilt and looked up,
 * parents, child ranges, symlink targets), then lookups of keys cut from the table's original bytes, so probes hit
 * real hashes too. Shared by test_meta_table.c (every vector and corruption) and test_meta_table_fuzz.c (ASan/UBSan):
 * a table fs_table_open accepted must keep every one of these inside its mapping. Returns a sum nobody may elide. */
#ifndef FANSTORE_META_WALK_H
#define FANSTORE_META_WALK_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "meta_table.h"

static unsigned long meta_walk(const fs_table *t, const char *original, size_t original_len, size_t step)
{
    unsigned long sum = 0;
    for (uint64_t i = 0; i < t->entry_count; i++) {
        const fs_entry *e = fs_table_entry(t, (uint32_t)i);
        fs_name n;
        fs_entry_name(t, e, &n);
        sum += n.tail_len ? (unsigned char)n.tail[n.tail_len - 1] : 0;
        sum += n.head_len ? (unsigned char)n.head[0] : 0;
        char key[4096];
        ssize_t len = fs_table_key(t, (uint32_t)i, key, sizeof key);
        if (len >= 0)
            sum += (uint64_t)fs_table_lookup(t, key, (size_t)len);
        sum += fs_entry_mode(t, fs_table_entry(t, fs_entry_parent(e)));
        uint32_t mode = fs_entry_mode(t, e);
        if (S_ISDIR(mode))
            for (uint32_t k = 0; k < fs_dir_count(e); k++)
                sum += fs_entry_name_len(fs_table_entry(t, fs_dir_first(e) + k));
        if (S_ISLNK(mode))
            for (uint64_t k = 0; k < fs_entry_size(e); k++)
                sum += (unsigned char)fs_entry_link_target(t, e)[k];
    }
    for (size_t off = 0; off + 16 <= original_len; off += step)
        sum += (uint64_t)fs_table_lookup(t, original + off, 1 + off % 16);
    return sum;
}

#endif
