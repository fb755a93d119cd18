/* shim_counters: the opens the shim serves by itself, counted where the runtime can read them.
 * Why: a local unpacked file and a file already in the runtime's cache open with one open(2) and no request, so
 * the runtime's statistics (fanstore run --stats) would otherwise never see the most common opens of a job.
 * Owns: the mapping of <rank dir>/shim.counters, 64 bytes (spec: runtime/src/main/java/org/fanstore/runtime/
 * stats/README.md; Java twin ShimCountersDescriptor; golden image tests/vectors/stats/shim-counters.bin).
 * Every process of the rank adds to the same words with relaxed atomic adds: one locked instruction per open,
 * next to the open(2) it counts. A file that is missing, foreign, short or of another version is not used: the
 * opens are then simply not counted (the runtime reports the counters as absent). Nothing here calls exit(). */
#ifndef FANSTORE_SHIM_COUNTERS_H
#define FANSTORE_SHIM_COUNTERS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define FS_COUNTERS_MAGIC   "FANSCNT1"
#define FS_COUNTERS_VERSION 2u

/* Index of each counter; the runtime reads them by the same numbers. */
enum fs_counter {
    FS_CTR_LOCAL_OPENS = 0,   /* direct opens of unpacked local files */
    FS_CTR_LOCAL_BYTES = 1,   /* sum of those files' sizes (bytes opened, an upper bound of bytes read) */
    FS_CTR_CACHE_OPENS = 2,   /* direct opens of cache/e<i> (hits the runtime never sees) */
    FS_CTR_CACHE_BYTES = 3,   /* sum of those files' sizes */
    /* Every runtime answer the client took: the runtime's answer stamp (slot answer_ns) until the client saw
     * DONE, summed in ns, and how many; the runtime cannot see its readers' wake-up any other way. */
    FS_CTR_WAKE_NS = 4,
    FS_CTR_WAKES = 5,
    FS_CTR_COUNT = 6
};

typedef struct fs_counters {
    char             magic[8];        /* "FANSCNT1" */
    uint32_t         version;         /* FS_COUNTERS_VERSION */
    uint32_t         count;           /* FS_CTR_COUNT */
    _Atomic uint64_t value[FS_CTR_COUNT];
} fs_counters;

_Static_assert(offsetof(fs_counters, version) == 8, "version at 8");
_Static_assert(offsetof(fs_counters, count) == 12, "count at 12");
_Static_assert(offsetof(fs_counters, value) == 16, "counters from 16");
_Static_assert(sizeof(fs_counters) == 64, "one cache line, as the runtime sizes the file");
_Static_assert(sizeof(_Atomic uint64_t) == 8, "plain 64-bit words, as the runtime reads them");

/* Maps <rank_dir>/shim.counters. Returns 0 and *out, or -errno (-EACCES: not ours or not regular; -EPROTO:
 * another length, magic, version or count; -ENAMETOOLONG). */
int fs_counters_attach(fs_counters **out, const char *rank_dir);
void fs_counters_detach(fs_counters *c);

/* One open of a file of `bytes` bytes, counted in the pair that starts at `opens`. */
static inline void fs_counters_open(fs_counters *c, enum fs_counter opens, uint64_t bytes)
{
    atomic_fetch_add_explicit(&c->value[opens], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->value[opens + 1], bytes, memory_order_relaxed);
}

#endif
