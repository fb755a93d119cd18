/* wrap_refuse: changes of attributes and new special files, and every change refused. Inputs are read-only, and
 * every change to one fails the way a read-only mount fails; outputs are real files in this node's upper tree
 * (upper.h), changed by the kernel. Errno choices for inputs, following the order Linux checks on a read-only mount:
 *   - a missing parent directory -> ENOENT (path lookup comes first);
 *   - creating something that exists (symlink, mknod, mkfifo target) -> EEXIST (checked before EROFS);
 *   - changing an existing entry (chmod, chown, truncate, utime*) that is missing -> ENOENT;
 *   - everything else -> EROFS.
 * Descriptor forms (fchmod, fchown, futimens) on our descriptors also give EROFS: the descriptor is a real
 * read-only file on node-local storage. Descriptors on outputs are plain kernel descriptors and work natively.
 * Path forms on /proc/self/fd/N naming one of our input descriptors stay refused (proc_fd.h). mkdir, unlink,
 * rmdir, rename and link, which other ranks must hear of: wrap_mutate.c. New files: wrap_open.c. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "namespace.h"
#include "proc_fd.h"
#include "real_libc.h"
#include "upper.h"
#include "wrap_change.h"

/* CHANGES of another rank's output (chmod, chown, utime) succeed without effect here (its holder's copy keeps its
 * attributes); TRUNCATES of one is refused (open it for writing: that copies it into this node). This node's
 * outputs resolve to their real path and are changed by the kernel. */
enum refusal { CREATES, CHANGES, TRUNCATES };

/* A resolution that ended on a real path forwards; otherwise (-errno only, here) it is the refusal. */
static fs_change forward_if_outside(fs_resolved rc)
{
    return rc == FS_RESOLVED_OUTSIDE ? FS_CHANGE_FORWARD : (fs_change)(int)rc;
}

/* Whether a change of inside key k (classified c) may go on: FORWARD when k led to a real path (this node's
 * output, a new file's place, or out of the namespace through a symlink), DONE for a change of another rank's
 * output that succeeds without effect, else the errno of the refusal. */
static fs_change refuse(fs_path_class c, fs_key *k, enum refusal what, int follow)
{
    if (c < 0)
        return (fs_change)(int)c;   /* the same -errno */
    const fs_state *s = fs_state_get();
    const fs_table *t = fs_state_table();
    if (s == NULL || t == NULL)
        return -EIO;
    fs_key probe = *k;
    uint32_t idx;
    fs_resolved rc = fs_ns_resolve(s, t, &probe, follow, &idx);
    if (rc == FS_RESOLVED_OUTSIDE) {
        *k = probe;
        return FS_CHANGE_FORWARD;
    }
    if (rc == FS_RESOLVED_INSIDE && what == CHANGES && fs_ns_is_output(t, idx))
        return FS_CHANGE_DONE;
    if (rc == FS_RESOLVED_INSIDE)
        return what == CREATES ? -EEXIST : -EROFS;
    if (rc != -ENOENT)
        return (fs_change)(int)rc;
    if (what != CREATES)
        return -ENOENT;
    *k = probe;
    return forward_if_outside(fs_ns_create_path(s, t, k));
}

/* A path-form change forwarded to a real path: an output of this node that other ranks see is published again. */
static int changed(int rc, const fs_key *k)
{
    if (rc == 0) {
        int saved = errno;
        fs_up_changed(fs_state_get(), k->buf);
        errno = saved;
    }
    return rc;
}

/* Changes that would reach a file we serve when named as /proc/self/fd/N of one of our descriptors. */
#define CHANGES_CONTENT(what) ((what) == CHANGES || (what) == TRUNCATES)

/* One path relative to dirfd (AT_FDCWD for the path forms): forward outside, refuse inside (a symlink leading out
 * forwards with the target path). */
#define CHANGE_DOOR(name, dirfd, what, follow, params, args, args_out) \
    FS_EXPORT int name params \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify_change(fs_state_get(), dirfd, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return CHANGES_CONTENT(what) && fs_proc_fd_is_ours(path) ? fs_fail(-EROFS) \
                                                                     : CALL_REAL(-1, name, P args); \
        fs_change rc = refuse(c, &k, what, follow); \
        if (rc == FS_CHANGE_FORWARD) \
            return changed(CALL_REAL(-1, name, P args_out), &k); \
        return rc == FS_CHANGE_DONE ? 0 : fs_fail(rc); \
    }
#define PATH_DOOR(name, what, follow, params, args, args_out) \
    CHANGE_DOOR(name, AT_FDCWD, what, follow, params, args, args_out)
#define AT_DOOR(name, what, follow, params, args, args_out) \
    CHANGE_DOOR(name, dirfd, what, follow, params, args, args_out)

/* args, args_out: parenthesised argument lists (unwrapped by P). */
#define P(...) __VA_ARGS__

PATH_DOOR(chmod, CHANGES, 1, (const char *path, mode_t mode), (path, mode), (k.buf, mode))
AT_DOOR(fchmodat, CHANGES, !(flags & AT_SYMLINK_NOFOLLOW), (int dirfd, const char *path, mode_t mode, int flags),
        (dirfd, path, mode, flags), (AT_FDCWD, k.buf, mode, flags))
PATH_DOOR(chown, CHANGES, 1, (const char *path, uid_t uid, gid_t gid), (path, uid, gid), (k.buf, uid, gid))
PATH_DOOR(lchown, CHANGES, 0, (const char *path, uid_t uid, gid_t gid), (path, uid, gid), (k.buf, uid, gid))
AT_DOOR(fchownat, CHANGES, !(flags & AT_SYMLINK_NOFOLLOW),
        (int dirfd, const char *path, uid_t uid, gid_t gid, int flags),
        (dirfd, path, uid, gid, flags), (AT_FDCWD, k.buf, uid, gid, flags))
PATH_DOOR(truncate, TRUNCATES, 1, (const char *path, off_t len), (path, len), (k.buf, len))
PATH_DOOR(truncate64, TRUNCATES, 1, (const char *path, off64_t len), (path, len), (k.buf, len))
PATH_DOOR(utime, CHANGES, 1, (const char *path, const struct utimbuf *times), (path, times), (k.buf, times))
PATH_DOOR(utimes, CHANGES, 1, (const char *path, const struct timeval tv[2]), (path, tv), (k.buf, tv))
PATH_DOOR(lutimes, CHANGES, 0, (const char *path, const struct timeval tv[2]), (path, tv), (k.buf, tv))
AT_DOOR(futimesat, CHANGES, 1, (int dirfd, const char *path, const struct timeval tv[2]), (dirfd, path, tv),
        (AT_FDCWD, k.buf, tv))
PATH_DOOR(mknod, CREATES, 0, (const char *path, mode_t mode, dev_t dev), (path, mode, dev), (k.buf, mode, dev))
AT_DOOR(mknodat, CREATES, 0, (int dirfd, const char *path, mode_t mode, dev_t dev), (dirfd, path, mode, dev),
        (AT_FDCWD, k.buf, mode, dev))
PATH_DOOR(mkfifo, CREATES, 0, (const char *path, mode_t mode), (path, mode), (k.buf, mode))
AT_DOOR(mkfifoat, CREATES, 0, (int dirfd, const char *path, mode_t mode), (dirfd, path, mode), (AT_FDCWD, k.buf, mode))

/* symlink: only the new link's place matters; the target is just bytes. */
FS_EXPORT int symlink(const char *target, const char *path)
{
    fs_key k;
    fs_path_class c = fs_ns_classify_change(fs_state_get(), AT_FDCWD, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, symlink, target, path);
    fs_change rc = refuse(c, &k, CREATES, 0);
    return FORWARD_OR(rc, CALL_REAL(-1, symlink, target, k.buf));
}

FS_EXPORT int symlinkat(const char *target, int dirfd, const char *path)
{
    fs_key k;
    fs_path_class c = fs_ns_classify_change(fs_state_get(), dirfd, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, symlinkat, target, dirfd, path);
    fs_change rc = refuse(c, &k, CREATES, 0);
    return FORWARD_OR(rc, CALL_REAL(-1, symlinkat, target, AT_FDCWD, k.buf));
}

/* utimensat with a NULL path acts on dirfd itself. */
FS_EXPORT int utimensat(int dirfd, const char *path, const struct timespec times[2], int flags)
{
    fs_fd_info info;
    if (fs_ns_empty_path(path) && fs_fd_get(dirfd, &info) != FS_FD_NONE &&
        fs_ns_fd(dirfd, &info, NULL) != FS_FD_NONE)
        return fs_fail(-EROFS);
    fs_key k;
    fs_path_class c = fs_ns_classify_change(fs_state_get(), dirfd, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, utimensat, dirfd, path, times, flags);
    fs_change rc = refuse(c, &k, CHANGES, !(flags & AT_SYMLINK_NOFOLLOW));
    if (rc == FS_CHANGE_FORWARD)
        return changed(CALL_REAL(-1, utimensat, AT_FDCWD, k.buf, times, flags), &k);
    return rc == FS_CHANGE_DONE ? 0 : fs_fail(rc);
}
/* Descriptor forms on our descriptors. */
static int fd_is_ours(int fd)
{
    fs_fd_info info;
    return fs_fd_get(fd, &info) != FS_FD_NONE && fs_ns_fd(fd, &info, NULL) != FS_FD_NONE;
}

FS_EXPORT int fchmod(int fd, mode_t mode)
{
    return fd_is_ours(fd) ? fs_fail(-EROFS) : CALL_REAL(-1, fchmod, fd, mode);
}

FS_EXPORT int fchown(int fd, uid_t uid, gid_t gid)
{
    return fd_is_ours(fd) ? fs_fail(-EROFS) : CALL_REAL(-1, fchown, fd, uid, gid);
}

FS_EXPORT int futimens(int fd, const struct timespec times[2])
{
    return fd_is_ours(fd) ? fs_fail(-EROFS) : CALL_REAL(-1, futimens, fd, times);
}
