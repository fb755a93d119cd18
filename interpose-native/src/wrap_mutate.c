/* wrap_mutate: calls that change the namespace. Inputs are read-only, and every change to one fails the way a
 * read-only mount fails; outputs are real files in this node's upper tree (upper.h), changed by the kernel.
 * Errno choices for inputs, following the order Linux checks on a read-only mount:
 *   - a missing parent directory -> ENOENT (path lookup comes first);
 *   - creating something that exists (mkdir, symlink, link, mknod target) -> EEXIST (checked before EROFS);
 *   - changing an existing entry (chmod, chown, truncate, utime*) that is missing -> ENOENT;
 *   - rename/link between the namespace and the outside -> EXDEV (different mounts); a hard link to an input or
 *     to another rank's output -> EXDEV (the bytes live elsewhere; cp and rsync then copy);
 *   - everything else -> EROFS.
 * Descriptor forms (fchmod, fchown, futimens) on our descriptors also give EROFS: the descriptor is a real
 * read-only file on node-local storage. Descriptors on outputs are plain kernel descriptors and work natively.
 * Outputs: a path resolves to its real place in the upper tree (namespace.c), the call runs there, and what other
 * ranks must learn (unlink, rename, mkdir, rmdir of published names) is sent to the runtime after the change,
 * which records it in the journal before it answers. Another rank's output is changed by asking the runtime
 * (it applies the record and the holder follows it). Path forms on /proc/self/fd/N naming one of our input
 * descriptors stay refused (proc_fd.h). New files are created in wrap_open.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "namespace.h"
#include "output_view.h"
#include "proc_fd.h"
#include "real_libc.h"
#include "upper.h"
#include "wire_client.h"
#include "wire_layout.h"

/* CHANGES of another rank's output (chmod, chown, utime) succeed without effect here (its holder's copy keeps its
 * attributes); TRUNCATES of one is refused (open it for writing: that copies it into this node). This node's
 * outputs resolve to their real path and are changed by the kernel. */
enum refusal { CREATES, CHANGES, REMOVES, TRUNCATES };

/* What a change inside the namespace came to, or a negative errno (its own type: never a path's class or place). */
typedef enum fs_change {
    FS_CHANGE_ERRNO   = -4095,   /* no outcome: marks that [-4095, -1] holds -errno values (and keeps it signed) */
    FS_CHANGE_DONE    = 0,       /* the call succeeds with nothing more to do here */
    FS_CHANGE_FORWARD = 1,       /* k->buf is a real path: make the call there */
} fs_change;

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
    if (what == CHANGES || what == TRUNCATES)
        return -ENOENT;
    if (what == CREATES) {
        *k = probe;
        return forward_if_outside(fs_ns_create_path(s, t, k));
    }
    int p = fs_ns_parent_exists(s, t, k);
    return p < 0 ? p : -EROFS;
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

/* One path: forward outside, refuse inside (a symlink leading out forwards with the target path). */
#define PATH_DOOR(name, what, follow, params, args, args_out) \
    FS_EXPORT int name params \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify_change(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return CHANGES_CONTENT(what) && fs_proc_fd_is_ours(path) ? fs_fail(-EROFS) \
                                                                     : CALL_REAL(-1, name, args); \
        fs_change rc = refuse(c, &k, what, follow); \
        if (rc == FS_CHANGE_FORWARD) \
            return changed(CALL_REAL(-1, name, args_out), &k); \
        return rc == FS_CHANGE_DONE ? 0 : fs_fail(rc); \
    }

#define AT_DOOR(name, what, follow, params, args, args_out) \
    FS_EXPORT int name params \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify_change(fs_state_get(), dirfd, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return CHANGES_CONTENT(what) && fs_proc_fd_is_ours(path) ? fs_fail(-EROFS) \
                                                                     : CALL_REAL(-1, name, args); \
        fs_change rc = refuse(c, &k, what, follow); \
        if (rc == FS_CHANGE_FORWARD) \
            return changed(CALL_REAL(-1, name, args_out), &k); \
        return rc == FS_CHANGE_DONE ? 0 : fs_fail(rc); \
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

/* Is real path p in this node's upper tree? Its key into key (length), or -1. */
static int upper_key(const fs_state *s, const char *p, char *key, size_t cap)
{
    return fs_up_key(s, p, strlen(p), key, cap);
}

/* Resolves k without following the last link: INSIDE with *idx, OUTSIDE (k rewritten: this node's output or a
 * path out of the namespace), or -errno. */
static fs_resolved find_key(fs_key *k, const fs_state **s, const fs_table **t, uint32_t *idx)
{
    *s = fs_state_get();
    *t = fs_state_table();
    if (*s == NULL || *t == NULL)
        return -EIO;
    fs_key probe = *k;
    fs_resolved rc = fs_ns_resolve(*s, *t, &probe, 0, idx);
    if (rc == FS_RESOLVED_OUTSIDE || rc == -ENOENT)
        *k = probe;
    return rc;
}

/* mkdir of inside key k: made in the upper tree, then recorded so other ranks see the directory. FORWARD when a
 * link led out of the namespace (forward k->buf). */
static fs_change make_dir(fs_path_class c, fs_key *k, mode_t mode)
{
    if (c < 0)
        return (fs_change)(int)c;   /* the same -errno */
    const fs_state *s;
    const fs_table *t;
    uint32_t idx;
    char key[PATH_MAX];
    fs_resolved rc = find_key(k, &s, &t, &idx);
    if (rc == FS_RESOLVED_OUTSIDE)
        return upper_key(s, k->buf, key, sizeof key) >= 0 ? -EEXIST : FS_CHANGE_FORWARD;
    if (rc == FS_RESOLVED_INSIDE)
        return -EEXIST;
    if (rc != -ENOENT)
        return (fs_change)(int)rc;
    size_t key_len = k->len;
    memcpy(key, k->buf, key_len + 1);
    rc = fs_ns_create_path(s, t, k);
    if (rc != FS_RESOLVED_OUTSIDE)
        return (fs_change)(int)rc;
    if (CALL_REAL(-1, mkdir, k->buf, mode) != 0)
        return -errno;
    struct stat st;
    if (CALL_REAL(-1, fstatat, AT_FDCWD, k->buf, &st, AT_SYMLINK_NOFOLLOW) == 0)
        fs_up_notify(FS_OP_MKDIR, key, key_len, NULL, 0, st.st_mode & 07777);
    return FS_CHANGE_DONE;
}

/* Directory key was removed here, so nothing of this node's lies below it any more; records of it that are still
 * in the journal (changes made without the shim) are withdrawn, deepest first, so other ranks see it go. */
static void forget_below(const fs_state *s, const char *key, size_t len)
{
    uint32_t slots[256];
    size_t n = fs_ov_keys_below(s, key, len, slots, sizeof slots / sizeof slots[0]);
    for (size_t depth = PATH_MAX; n > 0 && depth > len; depth--) {
        for (size_t i = 0; i < n; i++) {
            size_t kl;
            const char *k = fs_ov_key(slots[i], &kl);
            const fs_ov_state *st = fs_ov_state_any(slots[i]);
            if (kl == depth && st != NULL)
                fs_up_notify(S_ISDIR(st->mode) ? FS_OP_RMDIR : FS_OP_UNLINK, k, kl, NULL, 0, 0);
        }
    }
}

/* unlink (dir = 0) or rmdir (dir = 1) of k. FORWARD when a link led out of the namespace (forward k->buf). */
static fs_change remove_key(fs_path_class c, fs_key *k, int dir)
{
    if (c < 0)
        return (fs_change)(int)c;   /* the same -errno */
    const fs_state *s;
    const fs_table *t;
    uint32_t idx;
    char key[PATH_MAX];
    fs_resolved rc = find_key(k, &s, &t, &idx);
    if (rc == FS_RESOLVED_OUTSIDE) {
        int kl = upper_key(s, k->buf, key, sizeof key);
        if (kl <= 0)
            return kl == 0 ? -EBUSY : FS_CHANGE_FORWARD;
        if (dir && fs_ov_any_below(s, key, (size_t)kl, 1))
            return -ENOTEMPTY;     /* other ranks' files are in it */
        if ((dir ? CALL_REAL(-1, rmdir, k->buf) : CALL_REAL(-1, unlink, k->buf)) != 0)
            return -errno;
        if (dir)
            forget_below(s, key, (size_t)kl);
        if (fs_ov_lookup_any(s, key, (size_t)kl) >= 0)
            fs_up_notify(dir ? FS_OP_RMDIR : FS_OP_UNLINK, key, (size_t)kl, NULL, 0, 0);
        return FS_CHANGE_DONE;
    }
    if (rc != FS_RESOLVED_INSIDE)
        return (fs_change)(int)rc;
    if (k->len == 0 || !fs_ns_is_output(t, idx))
        return dir && !S_ISDIR(fs_ns_mode(t, idx)) ? -ENOTDIR : -EROFS;
    int is_dir = S_ISDIR(fs_ns_mode(t, idx));
    if (dir != is_dir)
        return dir ? -ENOTDIR : -EISDIR;
    return fs_up_notify(dir ? FS_OP_RMDIR : FS_OP_UNLINK, k->buf, k->len, NULL, 0, 0);
}

#define FORWARD_OR(rc, call) ((rc) == FS_CHANGE_FORWARD ? (call) : (rc) < 0 ? fs_fail(rc) : 0)

FS_EXPORT int mkdir(const char *path, mode_t mode)
{
    fs_key k;
    fs_path_class c = fs_ns_classify_change(fs_state_get(), AT_FDCWD, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, mkdir, path, mode);
    fs_change rc = make_dir(c, &k, mode);
    return FORWARD_OR(rc, CALL_REAL(-1, mkdir, k.buf, mode));
}

FS_EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
    fs_key k;
    fs_path_class c = fs_ns_classify_change(fs_state_get(), dirfd, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, mkdirat, dirfd, path, mode);
    fs_change rc = make_dir(c, &k, mode);
    return FORWARD_OR(rc, CALL_REAL(-1, mkdirat, AT_FDCWD, k.buf, mode));
}

FS_EXPORT int rmdir(const char *path)
{
    fs_key k;
    fs_path_class c = fs_ns_classify_change(fs_state_get(), AT_FDCWD, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, rmdir, path);
    fs_change rc = remove_key(c, &k, 1);
    return FORWARD_OR(rc, CALL_REAL(-1, rmdir, k.buf));
}

FS_EXPORT int unlink(const char *path)
{
    fs_key k;
    fs_path_class c = fs_ns_classify_change(fs_state_get(), AT_FDCWD, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, unlink, path);
    fs_change rc = remove_key(c, &k, 0);
    return FORWARD_OR(rc, CALL_REAL(-1, unlink, k.buf));
}

FS_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
    fs_key k;
    fs_path_class c = fs_ns_classify_change(fs_state_get(), dirfd, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, unlinkat, dirfd, path, flags);
    fs_change rc = remove_key(c, &k, (flags & AT_REMOVEDIR) != 0);
    return FORWARD_OR(rc, CALL_REAL(-1, unlinkat, AT_FDCWD, k.buf, flags));
}

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

/* Where one side of a two-path call stands. */
enum side { LOCAL, REMOTE, ABSENT };

/* Classifies one side of rename/link (inside key k, not following the last link). LOCAL: k->buf is the real
 * path, key/klen the key; REMOTE: another rank's output; ABSENT: k->buf is where it would be made (parents made).
 * -EROFS for an input, -EXDEV for a path that leads out of the namespace. */
static int side_of(fs_key *k, char *key, size_t *klen, enum side *where, int create)
{
    const fs_state *s;
    const fs_table *t;
    uint32_t idx;
    memcpy(key, k->buf, k->len + 1);
    *klen = k->len;
    fs_resolved rc = find_key(k, &s, &t, &idx);
    if (rc == FS_RESOLVED_OUTSIDE) {
        int kl = upper_key(s, k->buf, key, PATH_MAX);
        if (kl <= 0)
            return -EXDEV;
        *klen = (size_t)kl;
        *where = LOCAL;
        return 0;
    }
    if (rc == FS_RESOLVED_INSIDE) {
        if (k->len == 0 || !fs_ns_is_output(t, idx))
            return -EROFS;
        *where = REMOTE;
        return 0;
    }
    if (rc != -ENOENT || !create)
        return rc;
    memcpy(key, k->buf, k->len + 1);
    *klen = k->len;
    rc = fs_ns_create_path(s, t, k);
    if (rc != FS_RESOLVED_OUTSIDE)
        return rc;
    *where = ABSENT;
    return 0;
}

/* Both paths classified: both outside -> forward; one inside -> EXDEV; else 0 with a and b the keys. */
static int two_paths(int dfd1, const char **p1, fs_key *a, int dfd2, const char **p2, fs_key *b, int *forward)
{
    const fs_state *s = fs_state_get();
    fs_path_class ca = fs_ns_classify_change(s, dfd1, p1, a);
    fs_path_class cb = fs_ns_classify_change(s, dfd2, p2, b);
    *forward = 0;
    if (ca == FS_PATH_OUTSIDE && cb == FS_PATH_OUTSIDE) {
        *forward = 1;
        return 0;
    }
    if (ca < 0 || cb < 0)
        return ca < 0 ? ca : cb;
    return ca != cb ? -EXDEV : 0;
}

/* rename inside the namespace. This node's output moves in the upper tree (the kernel decides), then other ranks
 * are told: the move of a published name, or the end of a published target the move replaced. Another rank's
 * output is moved by the runtime. Inputs, as a source or a target, are read-only: EROFS. */
static int rename_inside(int fd1, const char **from, int fd2, const char **to, unsigned flags, int *forward)
{
    fs_key a, b;
    int rc = two_paths(fd1, from, &a, fd2, to, &b, forward);
    if (*forward || rc < 0)
        return rc;
    char akey[PATH_MAX], bkey[PATH_MAX];
    size_t alen, blen;
    enum side wa, wb;
    if ((rc = side_of(&a, akey, &alen, &wa, 0)) < 0 || (rc = side_of(&b, bkey, &blen, &wb, 1)) < 0)
        return rc;
    const fs_state *s = fs_state_get();
    if (wb == REMOTE && (flags & RENAME_NOREPLACE))
        return -EEXIST;
    if (wa == LOCAL) {
        char bpath[PATH_MAX];
        if (wb == REMOTE) {
            if ((rc = fs_up_make_parents(s, bkey, blen)) < 0 ||
                (rc = fs_up_path(s, bkey, blen, bpath, sizeof bpath)) < 0)
                return rc;
        } else {
            memcpy(bpath, b.buf, b.len + 1);
        }
        if ((flags ? CALL_REAL(-1, renameat2, AT_FDCWD, a.buf, AT_FDCWD, bpath, flags)
                   : CALL_REAL(-1, rename, a.buf, bpath)) != 0)
            return -errno;
        if (fs_ov_lookup_any(s, akey, alen) >= 0 || fs_ov_any_below(s, akey, alen, 0))
            fs_up_notify(FS_OP_RENAME, akey, alen, bkey, blen, 0);
        else if (fs_ov_lookup_any(s, bkey, blen) >= 0)
            fs_up_notify(FS_OP_UNLINK, bkey, blen, NULL, 0, 0);
        return 0;
    }
    if (flags & RENAME_EXCHANGE)
        return -EINVAL;
    if (wb == LOCAL) {
        if (flags & RENAME_NOREPLACE)
            return -EEXIST;
        if (CALL_REAL(-1, unlink, b.buf) != 0 && CALL_REAL(-1, rmdir, b.buf) != 0)
            return -errno;
    }
    return fs_up_notify(FS_OP_RENAME, akey, alen, bkey, blen, 0);
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

/* A hard link among this node's outputs; a link to an input or to another rank's output: EXDEV. */
static int link_inside(int fd1, const char **from, int fd2, const char **to, int flags, int *forward)
{
    fs_key a, b;
    int rc = two_paths(fd1, from, &a, fd2, to, &b, forward);
    if (*forward || rc < 0)
        return rc;
    char akey[PATH_MAX], bkey[PATH_MAX];
    size_t alen, blen;
    enum side wa, wb;
    if ((rc = side_of(&a, akey, &alen, &wa, 0)) < 0)
        return rc == -EROFS ? -EXDEV : rc;
    if ((rc = side_of(&b, bkey, &blen, &wb, 1)) < 0)
        return rc == -EROFS ? -EEXIST : rc;
    if (wb != ABSENT)
        return -EEXIST;
    if (wa != LOCAL)
        return -EXDEV;
    if (CALL_REAL(-1, linkat, AT_FDCWD, a.buf, AT_FDCWD, b.buf, flags) != 0)
        return -errno;
    const fs_state *s = fs_state_get();
    if (fs_ov_lookup_any(s, akey, alen) >= 0)
        fs_up_notify(FS_OP_PUBLISH, bkey, blen, NULL, 0, 0);
    return 0;
}

FS_EXPORT int link(const char *from, const char *to)
{
    int forward, rc = link_inside(AT_FDCWD, &from, AT_FDCWD, &to, 0, &forward);
    return forward ? CALL_REAL(-1, link, from, to) : rc < 0 ? fs_fail(rc) : 0;
}

FS_EXPORT int linkat(int fd1, const char *from, int fd2, const char *to, int flags)
{
    int forward, rc = link_inside(fd1, &from, fd2, &to, flags, &forward);
    return forward ? CALL_REAL(-1, linkat, fd1, from, fd2, to, flags) : rc < 0 ? fs_fail(rc) : 0;
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
