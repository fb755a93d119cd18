/* upper: this node's outputs as a real directory tree on local storage (the rank's upper directory, named in
 * the output journal's header). A key the table does not hold lives at <upper>/<key> from the moment it is
 * created, so every call on it is the kernel's: open, reopen, rename and unlink of open files, truncate, chmod,
 * utime, umask, links, fifos, sockets, xattrs. Inputs are never shadowed: the table is asked first.
 * Other nodes learn of a file when a descriptor that wrote it closes (PUBLISH: the runtime links the inode and
 * commits a FILE record), and of unlink, rename, mkdir and rmdir from the journal records the wrappers send
 * (fs_up_notify). Descriptors open for writing on the tree are tracked in fd_table (FS_FD_OUTPUT; invisible to
 * every other wrapper), inherited ones are adopted when an image starts, and exit publishes what is still open.
 * None of this writes shared state in a vfork child. */
#ifndef FANSTORE_UPPER_H
#define FANSTORE_UPPER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rank_dir.h"
#include "shim_state.h"

#ifndef FS_RANK_UPPER_DIR
#define FS_RANK_UPPER_DIR "upper"
#endif

/* The canonical upper directory (no symlinks, no trailing slash) and its length; NULL without a journal. */
const char *fs_up_root(const fs_state *s, size_t *len);

/* <upper>/<key> into buf: its length, or -ENAMETOOLONG / -EIO (no upper directory). */
int fs_up_path(const fs_state *s, const char *key, size_t key_len, char *buf, size_t cap);

/* lstat of <upper>/<key> (a key's place here, which stat answers for before other ranks' outputs): 0 or -errno. */
int fs_up_lstat(const fs_state *s, const char *key, size_t key_len, struct stat *st);

/* The key of a real path under the upper directory (length, copied into key), or -1 when it is not under it.
 * "" (0) is the upper directory itself. */
int fs_up_key(const fs_state *s, const char *real, size_t real_len, char *key, size_t cap);

/* The namespace path (mount + "/" + key) of a real path in the upper tree into buf: its length, -ENOENT when real
 * is not in the upper tree, -ENAMETOOLONG when the namespace path does not fit cap. The one place this mapping
 * is made (a real cwd, a real directory descriptor, realpath). */
int fs_up_mount_path(const fs_state *s, const char *real, size_t real_len, char *buf, size_t cap);

/* Makes every missing ancestor directory of key in the upper tree (the caller checked that the parent exists
 * in the namespace). 0 or -errno. */
int fs_up_make_parents(const fs_state *s, const char *key, size_t key_len);

/* Tells the runtime of a change made in the upper tree (FS_OP_UNLINK, RENAME, MKDIR, RMDIR; mode for MKDIR),
 * or asks it to make one to an output another rank holds. 0 or -errno. */
int fs_up_notify(uint32_t op, const char *key, size_t key_len, const char *target, size_t target_len,
                 uint32_t mode);

/* fd was opened for writing on a file of the upper tree (checked here for outside opens: flags and the
 * descriptor's real name): track it so its close publishes the file. */
void fs_up_opened(int fd, int flags);
/* fd (tracked or not) is about to be closed or replaced: publish it when it writes an upper file. 0, or the
 * error its close reports when the other ranks cannot be told of the file (the runtime logs why, naming it):
 * -ENOSPC (the output journal is full) or -EIO (anything else: a refused name, a failed rank, no runtime), the
 * errors close(2) already reports for a write a networked file system could not keep. */
int fs_up_closing(int fd);
/* A path-form change (chmod, utime, truncate) succeeded on real path: republish when the file is published. */
void fs_up_changed(const fs_state *s, const char *real);
/* Publishes every file this process still has open for writing (exit paths). */
void fs_up_exit(void);

#endif
