/* wrap_mutate: every call that would change the namespace fails the way a read-only mount fails.
 * Errno choices, following the order Linux checks on a read-only mount:
 *   - a missing parent directory -> ENOENT (path lookup comes first);
 *   - creating something that exists (mkdir, symlink, link, mknod target) -> EEXIST (checked before EROFS);
 *   - changing an existing entry (chmod, chown, truncate, utime*) that is missing -> ENOENT;
 *   - rename/link between the namespace and the outside -> EXDEV (different mounts);
 *   - everything else -> EROFS.
 * Descriptor forms (fchmod, fchown, futimens) on our descriptors also give EROFS: the descriptor is a
 * real read-only file on node-local storage, which must not be changed behind the table's back.
 * The job's own outputs are the exception: mkdir of a new directory, and rmdir, unlink, rename of committed
 * outputs go to the runtime (output_op), which checks them against the whole namespace and publishes them in
 * the journal before it answers, so the caller's next stat sees the change. Inputs stay read-only: EROFS.
 * So do the path forms (chmod, truncate, utime...) on /proc/self/fd/N naming one of our descriptors: the same
 * file by another name (proc_fd.h). New files are created in wrap_open.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "namespace.h"
#include "output_handles.h"
#include "proc_fd.h"
#include "real_libc.h"
#include "wire_client.h"
#include "wire_layout.h"

/* CHANGES of an output (chmod, chown, utime: tar and cp -p restore them) succeed without effect: an output's
 * mode is set at creation and its time at commit. TRUNCATES of an output is refused like any change of a
 * committed file by path (open it for writing and ftruncate instead). */
enum refusal { CREATES, CHANGES, REMOVES, TRUNCATES };

/* The errno for a refused change of inside key k; OUTSIDE (1) when a symlink led out (forward k.buf). */
static int refuse(int c, fs_key *k, enum refusal what, int follow)
{
    if (c < 0)
        return c;
    const fs_state *s = fs_state_get();
    const fs_table *t = fs_state_table();
    if (s == NULL || t == NULL)
        return -EIO;
    fs_key probe = *k;
    uint32_t idx;
    int rc = fs_ns_resolve(s, t, &probe, follow, &idx);
    if (rc == FS_RESOLVED_OUTSIDE) {
        *k = probe;
        return FS_RESOLVED_OUTSIDE;
    }
    if (rc == 0 && what == CHANGES && fs_ns_is_output(t, idx))
        return 0;
    if (rc == 0)
        return what == CREATES ? -EEXIST : -EROFS;
    if (rc != -ENOENT)
        return rc;
    if (what == CHANGES || what == TRUNCATES)
        return -ENOENT;
    int p = fs_ns_parent_exists(s, t, k);
    return p < 0 ? p : -EROFS;
}

static int fail_or(int rc)
{
    return fs_fail(rc == FS_RESOLVED_OUTSIDE ? -EXDEV : rc);
}

/* Changes that would reach a file we serve when named as /proc/self/fd/N of one of our descriptors. */
#define CHANGES_CONTENT(what) ((what) == CHANGES || (what) == TRUNCATES)

/* One path: forward outside, refuse inside (a symlink leading out forwards with the target path). */
#define PATH_DOOR(name, what, follow, params, args, args_out) \
    FS_EXPORT int name params \
    { \
        fs_key k; \
        int c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return CHANGES_CONTENT(what) && fs_proc_fd_is_ours(path) ? fs_fail(-EROFS) \
                                                                     : CALL_REAL(-1, name, args); \
        int rc = refuse(c, &k, what, follow); \
        if (rc == FS_RESOLVED_OUTSIDE) \
            return CALL_REAL(-1, name, args_out); \
        return rc == 0 ? 0 : fs_fail(rc); \
    }

#define AT_DOOR(name, what, follow, params, args, args_out) \
    FS_EXPORT int name params \
    { \
        fs_key k; \
        int c = fs_ns_classify(fs_state_get(), dirfd, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return CHANGES_CONTENT(what) && fs_proc_fd_is_ours(path) ? fs_fail(-EROFS) \
                                                                     : CALL_REAL(-1, name, args); \
        int rc = refuse(c, &k, what, follow); \
        if (rc == FS_RESOLVED_OUTSIDE) \
            return CALL_REAL(-1, name, args_out); \
        return rc == 0 ? 0 : fs_fail(rc); \
    }

#define P(...) __VA_ARGS__

PATH_DOOR(chmod, CHANGES, 1, (const char *path, mode_t mode), P(path, mode), P(k.buf, mode))
AT_DOOR(fchmodat, CHANGES, !(flags & AT_SYMLINK_NOFOLLOW), (int dirfd, const char *path, mode_t mode, int flags),
        P(dirfd, path, mode, flags), P(AT_FDCWD, k.buf, mode, flags))
PATH_DOOR(chown, CHANGES, 1, (const char *path, uid_t uid, gid_t gid), P(path, uid, gid), P(k.buf, uid, gid))
PATH_DOOR(lchown, CHANGES, 0, (const char *path, uid_t uid, gid_t gid), P(path, uid, gid), P(k.buf, uid, gid))
AT_DOOR(fchownat, CHANGES, !(flags & AT_SYMLINK_NOFOLLOW),
        (int dirfd, const char *path, uid_t uid, gid_t gid, int flags),
        P(dirfd, path, uid, gid, flags), P(AT_FDCWD, k.buf, uid, gid, flags))
PATH_DOOR(truncate, TRUNCATES, 1, (const char *path, off_t len), P(path, len), P(k.buf, len))
PATH_DOOR(truncate64, TRUNCATES, 1, (const char *path, off64_t len), P(path, len), P(k.buf, len))
PATH_DOOR(utime, CHANGES, 1, (const char *path, const struct utimbuf *times), P(path, times), P(k.buf, times))
PATH_DOOR(utimes, CHANGES, 1, (const char *path, const struct timeval tv[2]), P(path, tv), P(k.buf, tv))
PATH_DOOR(lutimes, CHANGES, 0, (const char *path, const struct timeval tv[2]), P(path, tv), P(k.buf, tv))
AT_DOOR(futimesat, CHANGES, 1, (int dirfd, const char *path, const struct timeval tv[2]), P(dirfd, path, tv),
        P(AT_FDCWD, k.buf, tv))
PATH_DOOR(mknod, CREATES, 0, (const char *path, mode_t mode, dev_t dev), P(path, mode, dev), P(k.buf, mode, dev))
AT_DOOR(mknodat, CREATES, 0, (int dirfd, const char *path, mode_t mode, dev_t dev), P(dirfd, path, mode, dev),
        P(AT_FDCWD, k.buf, mode, dev))
PATH_DOOR(mkfifo, CREATES, 0, (const char *path, mode_t mode), P(path, mode), P(k.buf, mode))
AT_DOOR(mkfifoat, CREATES, 0, (int dirfd, const char *path, mode_t mode), P(dirfd, path, mode), P(AT_FDCWD, k.buf, mode))

/* ---- the job's outputs ------------------------------------------------------------------------ */

/* Asks the runtime to apply op on key (RENAME: to target). 0 or -errno. */
static int output_op(uint32_t op, const fs_key *k, const fs_key *target, uint32_t mode)
{
    int err = -EIO;
    fs_wire *w = fs_state_wire(&err);
    if (w == NULL)
        return err;
    if (fs_state_in_vfork_child())
        return -ENOSYS;
    const fs_wire_request r = { .op = op, .key = k->buf, .key_len = k->len,
                                .target = target != NULL ? target->buf : NULL,
                                .target_len = target != NULL ? target->len : 0, .entry = mode,
                                .argument = (uint64_t)getpid() };
    fs_state_enter();
    int rc = fs_wire_call(w, &r, NULL, 0);
    fs_state_leave();
    return rc < 0 ? rc : 0;
}

/* Resolves k without following the last link: INSIDE with *idx, OUTSIDE, or -errno. */
static int find_key(fs_key *k, const fs_state **s, const fs_table **t, uint32_t *idx)
{
    *s = fs_state_get();
    *t = fs_state_table();
    if (*s == NULL || *t == NULL)
        return -EIO;
    fs_key probe = *k;
    int rc = fs_ns_resolve(*s, *t, &probe, 0, idx);
    if (rc == FS_RESOLVED_OUTSIDE)
        *k = probe;
    return rc;
}

static int make_dir(int c, fs_key *k, mode_t mode)
{
    if (c < 0)
        return c;
    const fs_state *s;
    const fs_table *t;
    uint32_t idx;
    int rc = find_key(k, &s, &t, &idx);
    if (rc == FS_RESOLVED_OUTSIDE)
        return rc;
    if (rc == 0)
        return -EEXIST;
    if (rc != -ENOENT)
        return rc;
    int p = fs_ns_parent_exists(s, t, k);
    if (p < 0)
        return p;
    return output_op(FS_OP_MKDIR, k, NULL, (uint32_t)(mode & ~fs_oh_umask() & 07777));
}

/* unlink (dir = 0) or rmdir (dir = 1) of k. */
static int remove_key(int c, fs_key *k, int dir)
{
    if (c < 0)
        return c;
    const fs_state *s;
    const fs_table *t;
    uint32_t idx;
    int rc = find_key(k, &s, &t, &idx);
    if (rc != 0)
        return rc;
    if (k->len == 0 || !fs_ns_is_output(t, idx))
        return dir && !S_ISDIR(fs_ns_mode(t, idx)) ? -ENOTDIR : -EROFS;
    int is_dir = S_ISDIR(fs_ns_mode(t, idx));
    if (dir != is_dir)
        return dir ? -ENOTDIR : -EISDIR;
    return output_op(dir ? FS_OP_RMDIR : FS_OP_UNLINK, k, NULL, 0);
}

#define FORWARD_OR(rc, call) ((rc) == FS_RESOLVED_OUTSIDE ? (call) : (rc) < 0 ? fs_fail(rc) : 0)

FS_EXPORT int mkdir(const char *path, mode_t mode)
{
    fs_key k;
    int c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, mkdir, path, mode);
    int rc = make_dir(c, &k, mode);
    return FORWARD_OR(rc, CALL_REAL(-1, mkdir, k.buf, mode));
}

FS_EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
    fs_key k;
    int c = fs_ns_classify(fs_state_get(), dirfd, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, mkdirat, dirfd, path, mode);
    int rc = make_dir(c, &k, mode);
    return FORWARD_OR(rc, CALL_REAL(-1, mkdirat, AT_FDCWD, k.buf, mode));
}

FS_EXPORT int rmdir(const char *path)
{
    fs_key k;
    int c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, rmdir, path);
    int rc = remove_key(c, &k, 1);
    return FORWARD_OR(rc, CALL_REAL(-1, rmdir, k.buf));
}

FS_EXPORT int unlink(const char *path)
{
    fs_key k;
    int c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, unlink, path);
    int rc = remove_key(c, &k, 0);
    return FORWARD_OR(rc, CALL_REAL(-1, unlink, k.buf));
}

FS_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
    fs_key k;
    int c = fs_ns_classify(fs_state_get(), dirfd, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, unlinkat, dirfd, path, flags);
    int rc = remove_key(c, &k, (flags & AT_REMOVEDIR) != 0);
    return FORWARD_OR(rc, CALL_REAL(-1, unlinkat, AT_FDCWD, k.buf, flags));
}

/* symlink: only the new link's place matters; the target is just bytes. */
FS_EXPORT int symlink(const char *target, const char *path)
{
    fs_key k;
    int c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, symlink, target, path);
    return fail_or(refuse(c, &k, CREATES, 0));
}

FS_EXPORT int symlinkat(const char *target, int dirfd, const char *path)
{
    fs_key k;
    int c = fs_ns_classify(fs_state_get(), dirfd, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, symlinkat, target, dirfd, path);
    return fail_or(refuse(c, &k, CREATES, 0));
}

/* utimensat with a NULL path acts on dirfd itself. */
FS_EXPORT int utimensat(int dirfd, const char *path, const struct timespec times[2], int flags)
{
    fs_fd_info info;
    if (fs_ns_empty_path(path) && fs_fd_get(dirfd, &info) != FS_FD_NONE &&
        fs_ns_fd(dirfd, &info, NULL) != FS_FD_NONE)
        return fs_fail(-EROFS);
    fs_key k;
    int c = fs_ns_classify(fs_state_get(), dirfd, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, utimensat, dirfd, path, times, flags);
    int rc = refuse(c, &k, CHANGES, !(flags & AT_SYMLINK_NOFOLLOW));
    if (rc == FS_RESOLVED_OUTSIDE)
        return CALL_REAL(-1, utimensat, AT_FDCWD, k.buf, times, flags);
    return rc == 0 ? 0 : fs_fail(rc);
}

/* Two paths: both outside -> libc; one inside -> EXDEV; both inside -> the source must exist, EROFS. */
static int two_paths(int dfd1, const char **p1, fs_key *a, int dfd2, const char **p2, fs_key *b, int *forward)
{
    const fs_state *s = fs_state_get();
    int ca = fs_ns_classify(s, dfd1, p1, a);
    int cb = fs_ns_classify(s, dfd2, p2, b);
    *forward = 0;
    if (ca == FS_PATH_OUTSIDE && cb == FS_PATH_OUTSIDE) {
        *forward = 1;
        return 0;
    }
    if (ca < 0 || cb < 0)
        return ca < 0 ? ca : cb;
    if (ca != cb)
        return -EXDEV;
    int rc = refuse(ca, a, REMOVES, 0);
    return rc == FS_RESOLVED_OUTSIDE ? -EXDEV : rc;
}

/* rename inside the namespace: a committed output moves (the runtime checks the target); an input: EROFS. */
static int rename_inside(int fd1, const char **from, int fd2, const char **to, unsigned flags, int *forward)
{
    fs_key a, b;
    int rc = two_paths(fd1, from, &a, fd2, to, &b, forward);
    if (*forward || rc != -EROFS)
        return rc;
    const fs_state *s;
    const fs_table *t;
    uint32_t idx, tidx;
    rc = find_key(&a, &s, &t, &idx);
    if (rc != 0)
        return rc == FS_RESOLVED_OUTSIDE ? -EXDEV : rc;
    if (a.len == 0 || !fs_ns_is_output(t, idx))
        return -EROFS;
    if (flags & RENAME_EXCHANGE)
        return -EINVAL;
    int trc = find_key(&b, &s, &t, &tidx);
    if (trc == FS_RESOLVED_OUTSIDE)
        return -EXDEV;
    if (trc == 0 && (flags & RENAME_NOREPLACE))
        return -EEXIST;
    if (trc == 0 && !fs_ns_is_output(t, tidx))
        return -EROFS;
    if (trc < 0 && trc != -ENOENT)
        return trc;
    return output_op(FS_OP_RENAME, &a, &b, 0);
}

FS_EXPORT int rename(const char *from, const char *to)
{
    int forward, rc = rename_inside(AT_FDCWD, &from, AT_FDCWD, &to, 0, &forward);
    return forward ? CALL_REAL(-1, rename, from, to) : rc < 0 ? fs_fail(rc) : 0;
}

FS_EXPORT int renameat(int fd1, const char *from, int fd2, const char *to)
{
    int forward, rc = rename_inside(fd1, &from, fd2, &to, 0, &forward);
    return forward ? CALL_REAL(-1, renameat, fd1, from, fd2, to) : rc < 0 ? fs_fail(rc) : 0;
}

FS_EXPORT int renameat2(int fd1, const char *from, int fd2, const char *to, unsigned flags)
{
    int forward, rc = rename_inside(fd1, &from, fd2, &to, flags, &forward);
    return forward ? CALL_REAL(-1, renameat2, fd1, from, fd2, to, flags) : rc < 0 ? fs_fail(rc) : 0;
}

FS_EXPORT int link(const char *from, const char *to)
{
    fs_key a, b;
    int forward, rc = two_paths(AT_FDCWD, &from, &a, AT_FDCWD, &to, &b, &forward);
    return forward ? CALL_REAL(-1, link, from, to) : fs_fail(rc);
}

FS_EXPORT int linkat(int fd1, const char *from, int fd2, const char *to, int flags)
{
    fs_key a, b;
    int forward, rc = two_paths(fd1, &from, &a, fd2, &to, &b, &forward);
    return forward ? CALL_REAL(-1, linkat, fd1, from, fd2, to, flags) : fs_fail(rc);
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
