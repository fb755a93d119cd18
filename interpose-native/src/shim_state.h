/* shim_state: the per-process state of the shim and its lazy initialisation.
 * Owns: the environment contract (FANSTORE_MOUNT, FANSTORE_SHM_DIR), the metadata table, the view of the runtime's
 * cache, the slices view, the counters of direct opens, the wire connection, the cached pid and the "void"
 * directory behind every virtual directory descriptor.
 * Invariants: the bottom of the shim: it uses none of the namespace's files (cwd, upper, output_view, namespace
 * are built on it); each attachment is made once, under its own mutex, and published with a release store; a
 * vfork child attaches nothing that lives in process memory; nothing here calls exit(): failures are errno. */
#ifndef FANSTORE_SHIM_STATE_H
#define FANSTORE_SHIM_STATE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "cache_view.h"
#include "meta_table.h"
#include "path_norm.h"
#include "shim_counters.h"
#include "slice_view.h"
#include "wire_client.h"

#define FS_EXPORT __attribute__((visibility("default")))

typedef struct fs_state {
    char   mount[PATH_MAX];     /* normalised FANSTORE_MOUNT, never "/" */
    size_t mount_len;
    char   shm_dir[PATH_MAX];   /* FANSTORE_SHM_DIR */
} fs_state;

/* The state when the shim is active, NULL when it is inert (FANSTORE_SHM_DIR unset, or bad mount) or when
 * this thread is inside the shim already (a libc call made by the shim itself reached a wrapper): in both
 * cases the wrapper passes the call through. Initialises on first call; safe from any thread. */
const fs_state *fs_state_get(void);

/* Marks this thread as inside the shim (wrappers pass through) for calls into code that may use libc. */
void fs_state_enter(void);
void fs_state_leave(void);

/* The mapped table, opened on first need (and retried after a failure); NULL when it cannot be opened.
 * Chosen errno for the caller: EIO, not ENOENT: a missing table is a broken runtime, and ENOENT would let a
 * training script silently see an empty dataset. */
const fs_table *fs_state_table(void);

/* The view of the runtime's cache (table t gives its entry count), attached on first need and tried only once:
 * the runtime creates cache.ref before it reports ready, so a missing or foreign one will not appear later.
 * NULL when unusable: every file that is not local is then asked of the runtime, as without a view. */
const fs_cache *fs_state_cache(const fs_table *t);

/* The view of slices.map (slice_view.h), attached on first need and tried once, like the cache view (the runtime
 * creates it before ready). NULL when unusable or in a vfork child: files then open the usual way. */
const fs_slices *fs_state_slices(const fs_table *t);

/* The rank's counters of opens served without the runtime (shim_counters.h), attached on first need and tried
 * once, like the cache view; NULL when unusable (those opens then go uncounted) and in a vfork child. */
fs_counters *fs_state_counters(void);

/* The wire connection, attached on first need; NULL and *err = -EIO when the runtime cannot be reached. */
fs_wire *fs_state_wire(int *err);

/* 1 in a vfork child (its memory is its parent's): wrappers then forward without touching shim state. */
int fs_state_in_vfork_child(void);

/* A fresh descriptor on the void directory (an empty directory deleted right after creation: nothing can
 * be created in it, it lists empty, fchdir to it works). Returns the fd or -errno. */
int fs_state_void_dup(int cloexec);
/* Identity of the void directory, for recognising our directory descriptors. */
void fs_state_void_id(uint64_t *dev, uint64_t *ino);
/* fd (or a range) is about to be closed or replaced by the application: if it is the void fd, forget it
 * (a new one is made on need). Not in a vfork child (checked inside). */
void fs_state_void_lost_if(int fd);
void fs_state_void_lost_range(unsigned first, unsigned last);

/* errno = -err; returns -1. */
static inline int fs_fail(int err) { extern int *__errno_location(void); *__errno_location() = -err; return -1; }

#endif
