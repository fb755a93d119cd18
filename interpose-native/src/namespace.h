/* namespace: answers about the virtual tree, for every wrapper family.
 * Owns: turning (dirfd, path) into a key (namespace.c), resolving keys through symlinks and into this node's upper
 * tree (namespace_resolve.c), and the stat/statx/statfs pictures and access answers of an entry
 * (namespace_stat.c). Holds no state of its own.
 * Sources of its answers: the metadata table (immutable once mapped); the current directory (cwd.h); our
 * descriptors (fd_table.h, checked against the kernel); this node's upper tree, asked with real system calls
 * (fstatat, readlink, mkdir of parents); other ranks' committed outputs (output_view.h, refreshed from the
 * journal on lookup). It takes no lock itself, but output_view's replay and the first attachment of the table
 * or of the upper directory and the first read of the cwd serialise on their owners' mutexes; after that, readers
 * of the cwd and of outputs take no lock.
 * Invariants: inputs are never shadowed (the table is asked first); a `..` never makes an outside path a key;
 * results are typed (fs_path_class, fs_resolved) with -errno in [-4095, -1]. */
#ifndef FANSTORE_NAMESPACE_H
#define FANSTORE_NAMESPACE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "fd_table.h"
#include "meta_table.h"
#include "shim_state.h"

typedef struct fs_key {
    size_t len;
    int    want_dir;        /* the path ended in "/", "/." or "/..": it must name a directory (else ENOTDIR) */
    char   buf[PATH_MAX];   /* the key, NUL-terminated; after FS_RESOLVED_OUTSIDE an absolute outside path */
} fs_key;

/* Classifies (dirfd, *path) for state s (NULL: inert). FS_PATH_OUTSIDE: forward the call with *path, which
 * is the caller's path, or k->buf when the caller's could not be walked by the kernel (FS_PATH_REWRITTEN).
 * FS_PATH_INSIDE: k holds the key. Negative errno otherwise (-EIO when a directory fd's table is gone).
 * A relative path is ours when dirfd is one of our directory descriptors, or AT_FDCWD with a cwd from
 * which the normalised path lands in the mount. */
fs_path_class fs_ns_classify(const fs_state *s, int dirfd, const char **path, fs_key *k);
/* As fs_ns_classify, for calls that change the tree: a path relative to a real descriptor on a directory of this
 * node's upper tree is also inside (its key), so the change reaches the namespace's records. */
fs_path_class fs_ns_classify_change(const fs_state *s, int dirfd, const char **path, fs_key *k);

/* A lookup relative to a real directory descriptor was forwarded (fs_ns_classify: FS_PATH_OUTSIDE) and the kernel
 * failed with errno ENOENT or ENOTDIR. When the descriptor is a directory of this node's upper tree, a symlink on
 * the way may lead where the kernel cannot follow (into the mount, or to an input): returns 1 with k holding the
 * path's key, to be answered as an inside path (os.fwalk, find and rm walk by descriptors). Else 0, errno kept. */
int fs_ns_retry_lookup(const fs_state *s, int dirfd, const char *path, fs_key *k);

/* Where a key resolved, or a negative errno (its own type: never a path classification's result). */
typedef enum fs_resolved {
    FS_RESOLVED_ERRNO   = -4095,   /* no place: marks that [-4095, -1] holds -errno values (and keeps it signed) */
    FS_RESOLVED_INSIDE  = 0,
    FS_RESOLVED_OUTSIDE = 1,
} fs_resolved;
/* Follows symlinks in k (every component but the last; the last too when follow_last). INSIDE: *index is
 * the entry (an input, or another rank's output) and k its key. OUTSIDE: a symlink led out of the namespace, or
 * the key is this node's output in the upper tree (upper.h); k->buf is the absolute path to hand to libc. Negative errno: -ENOENT, -ENOTDIR (a file used as a directory), -ELOOP (more than 40 links). */
fs_resolved fs_ns_resolve(const fs_state *s, const fs_table *t, fs_key *k, int follow_last, uint32_t *index);

/* Key k resolved to -ENOENT and is to be created: checks its parent exists in the namespace, makes the parent's
 * directories in the upper tree, and puts the real path into k. FS_RESOLVED_OUTSIDE (forward k->buf) or -errno. */
fs_resolved fs_ns_create_path(const fs_state *s, const fs_table *t, fs_key *k);

/* Entries and outputs share one index space: idx < t->entry_count is a table entry; above it, the committed
 * output in output_view slot idx - entry_count (stable for the process's life, so it may stand in fd_table). */
static inline int fs_ns_is_output(const fs_table *t, uint32_t idx) { return idx >= t->entry_count; }
/* st_mode of idx (0 when an output has since been removed). */
uint32_t fs_ns_mode(const fs_table *t, uint32_t idx);
/* Key of idx written into buf with a NUL (the table stores no keys: rebuilt from the names along the parent
 * chain); returns its length, or -ENAMETOOLONG when it does not fit cap bytes. */
ssize_t fs_ns_key(const fs_table *t, uint32_t idx, char *buf, size_t cap);
/* The index of an existing key (table first, then committed outputs), or -1. */
int64_t fs_ns_find(const fs_state *s, const fs_table *t, const char *key, size_t len);

/* Absolute path of entry idx (mount + "/" + key) into buf; returns the length or -ENAMETOOLONG. */
ssize_t fs_ns_entry_path(const fs_state *s, const fs_table *t, uint32_t idx, char *buf, size_t cap);

/* stat of an entry: st_dev from the table, st_ino = index + 1, times = mtime, st_nlink = 2 + subdirectories
 * for a directory (what ext4 reports, and what fts' leaf optimisation relies on), st_blocks rounded to
 * 4 KiB blocks like a disk file system (0 for a symlink, as ext4's inline links). */
void fs_ns_stat(const fs_table *t, uint32_t idx, struct stat *st);
void fs_ns_statx(const fs_table *t, uint32_t idx, struct statx *stx);
/* The file system picture for statfs/statvfs (f_type FS_NS_MAGIC; not ST_RDONLY: outputs are created here). */
#define FS_NS_MAGIC 0x46414e53u   /* "FANS" */
void fs_ns_statfs(const fs_table *t, struct statfs *sf);
void fs_ns_statvfs(const fs_table *t, struct statvfs *sv);

/* Which of our descriptors fd is, checked against the kernel: a slot whose real object changed (closed
 * behind our back and the number reused) reads as FS_FD_NONE. *real gets the real fstat when non-NULL. */
uint32_t fs_ns_fd(int fd, fs_fd_info *info, struct stat *real);

/* "" (or NULL) path: with AT_EMPTY_PATH the call is about the descriptor itself. Out of line on purpose:
 * glibc declares these parameters nonnull, so an inline test would be optimised away. */
int fs_ns_empty_path(const char *path);

/* access(2) answer for an entry: 0 or -EACCES / -EROFS (W_OK). effective: use euid/egid. */
int fs_ns_access(const fs_table *t, uint32_t idx, int mode, int effective);

#endif
