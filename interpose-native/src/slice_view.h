/* slice_view: the shim's view of slices.map, the runtime's list of table entries whose raw bytes can be read
 * straight from a partition copy on this node (a "slice": see docs/slices.md for what the shim does with one).
 * Format (the one specification): runtime/src/main/java/org/fanstore/runtime/shm/README.md, "slices.map"; golden
 * image tests/vectors/slices/. The runtime publishes a partition's path before any entry naming it, and an entry's
 * offset before its slot word, each with a release store; a published record never changes. So one acquire load of
 * the slot word tells whether the rest may be read. No function here allocates or calls exit(). */
#ifndef FANSTORE_SLICE_VIEW_H
#define FANSTORE_SLICE_VIEW_H

#include <stddef.h>
#include <stdint.h>

#define FS_SLICE_MAGIC        "FANSSLIC"
#define FS_SLICE_VERSION      1u
#define FS_SLICE_HEADER_SIZE  32u
#define FS_SLICE_SLOT_SIZE    256u
#define FS_SLICE_PATH_MAX     252u
#define FS_SLICE_ENTRY_SIZE   16u
/* Bit 30 of an OPEN request's flags: the client can take a slice (the runtime may answer with an empty path). */
#define FS_OPEN_SLICE_OK      0x40000000

typedef struct fs_slices {
    const unsigned char *base;   /* the mapping; NULL when unusable */
    size_t   length;
    uint32_t slots;
    uint64_t entries;
} fs_slices;

/* Maps <rank_dir>/slices.map read-only when it is a regular file of ours with the right magic, version and the
 * length its counts imply, and entry_count matches the table. Returns 0 or -errno (-EACCES, -EPROTO). */
int fs_slices_attach(fs_slices *v, const char *rank_dir, uint64_t entry_count);
void fs_slices_detach(fs_slices *v);
/* Same checks on a mapping the caller made (tests map the golden image). */
int fs_slices_view(fs_slices *v, const void *map, size_t length, uint64_t entry_count);

/* 1 when entry idx is published: *path (not NUL-terminated, *path_len bytes) names the partition copy and
 * *offset is where the entry's raw body starts in it. 0 otherwise (read the file the usual way). */
int fs_slices_lookup(const fs_slices *v, uint32_t idx, const char **path, size_t *path_len, uint64_t *offset);

#endif
