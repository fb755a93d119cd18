/* cache_view: the shim's view of the runtime's cache, so that a file already materialised (decompressed or
 * fetched) opens with one open(2) and no request, as fast as a local unpacked file.
 * Owns: the cache directories' paths (tmpfs <rank dir>/cache, and node-local <local rank dir>/cache for files of
 * at least the threshold) and the mapping of the reference bits, cache.ref: one byte per metadata-table entry
 * (byte i for entry i), then the threshold, u64 little-endian; file length = the table's entry count + 8 (spec:
 * runtime/src/main/java/org/fanstore/runtime/shm/README.md, "cache.ref"; golden image tests/vectors/cache/).
 * The shim stores 1 into byte i when it opens e<i> itself; the runtime's CLOCK eviction reads and clears the
 * bytes, so it learns about hits it never saw.
 * Invariants the shim relies on (the runtime's MaterializedCache keeps them): cache/e<index> exists only complete
 * and CRC-checked (written under a temporary name, then renamed), and eviction unlinks it, so an open of that name
 * gives either the whole, right file (kept alive by the descriptor) or ENOENT, a miss the runtime then serves.
 * A runtime answer is a pin (fs_cache_release_pin), which eviction cannot remove before the opener's open.
 * A view whose ref file is missing, not ours or of another length is not usable: the caller asks the runtime for
 * every file (slower, never wrong). No function here allocates or calls exit(). */
#ifndef FANSTORE_CACHE_VIEW_H
#define FANSTORE_CACHE_VIEW_H

#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fs_cache {
    _Atomic unsigned char *ref;   /* entries bytes, shared with the runtime; NULL when the view is unusable */
    uint64_t entries;
    uint64_t local_min;           /* files of at least this size are in local_dir */
    size_t   dir_len;
    size_t   local_dir_len;       /* 0: no local directory known, every file is in dir */
    char     dir[PATH_MAX];       /* <rank dir>/cache */
    char     local_dir[PATH_MAX]; /* <local rank dir>/cache, beside the table's local root <local rank dir>/files */
} fs_cache;

/* Maps <rank_dir>/cache.ref, which must be a regular file of ours exactly entry_count + 8 bytes long; the local
 * directory is the sibling "cache" of local_root (the table's local root, local_root_len bytes, no NUL needed).
 * Returns 0, or -errno (-EACCES: not ours or not regular; -EPROTO: other length; -ENAMETOOLONG) with c left
 * unusable. */
int fs_cache_attach(fs_cache *c, const char *rank_dir, uint64_t entry_count, const char *local_root,
                    size_t local_root_len);
void fs_cache_detach(fs_cache *c);

/* Writes the path of entry idx (size bytes, from the table) into buf: <local_dir>/e<idx> when size reaches the
 * threshold, <dir>/e<idx> otherwise (the runtime's MaterializedCache.pathOf follows the same rule). Returns 0, or
 * -ENAMETOOLONG; -ERANGE for an index outside the table. */
int fs_cache_path(const fs_cache *c, uint32_t idx, uint64_t size, char *buf, size_t cap);

/* Releases a pin: the runtime answers a cache file with a second name made for that open alone
 * (<cache dir>/p<index>-<n>, CachePins.java), which the opener unlinks once its open is done (succeeded or
 * failed); the unlink is how the runtime learns it is released. A path whose last component is not a pin is left
 * alone; a failed unlink only leaves the name to the runtime's grace sweep. errno is preserved. */
void fs_cache_release_pin(const char *path);

/* Records a use of entry idx the runtime will not see. A relaxed load, and a relaxed store only when the bit is
 * clear, so the many readers of a hot file do not keep pulling its cache line away from each other. */
static inline void fs_cache_touch(const fs_cache *c, uint32_t idx)
{
    if (idx < c->entries && atomic_load_explicit(&c->ref[idx], memory_order_relaxed) == 0)
        atomic_store_explicit(&c->ref[idx], 1, memory_order_relaxed);
}

#endif
