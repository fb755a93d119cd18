/* proc_fd: recognises the names under which the kernel reopens one of the shim's descriptors
 * (/proc/self/fd/N, /proc/thread-self/fd/N, /proc/<our pid>/fd/N, /dev/fd/N). Such an open does not look
 * up the path: it reaches the backing file itself (an unpacked file on node-local storage or a cache file),
 * bypassing the read-only view, and for root no mode bit stops a write. Reopening for reading stays allowed
 * (freopen on an inside path relies on it). */
#ifndef FANSTORE_PROC_FD_H
#define FANSTORE_PROC_FD_H

#include <stdint.h>

/* 1 when path names one of our open file descriptors (checked against the kernel, so a stale slot does not
 * count), else 0. Cheap for every other path: one prefix comparison. */
int fs_proc_fd_is_ours(const char *path);

/* -EROFS when an open with these flags would change one of our files through path, else 0. EROFS, as for
 * a write open of the file under the mount: the caller reaches the same read-only file by another name. */
int fs_proc_fd_refuse_write(const char *path, int flags);

/* 1 and *index (the entry) when path names one of our slice descriptors (checked against the kernel), else 0. */
int fs_proc_fd_slice(const char *path, uint32_t *index);

#endif
