/* wrap_mutate: the changes other ranks must hear of: mkdir, rmdir, unlink, rename and link. Inputs are read-only
 * (EROFS, or EEXIST for a mkdir or link target that exists, ENOENT for a missing parent, as a read-only mount);
 * rename/link between the namespace and the outside -> EXDEV (different mounts); a hard link to an input or to
 * another rank's output -> EXDEV (the bytes live elsewhere; cp and rsync then copy).
 * Outputs: a path resolves to its real place in the upper tree (namespace_resolve.c), the call runs there, and what
 * other ranks must learn (unlink, rename, mkdir, rmdir of published names) is sent to the runtime after the change,
 * which records it in the journal before it answers. Another rank's output is changed by asking the runtime (it
 * applies the record and the holder follows it). Refused and attribute changes: wrap_refuse.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "namespace.h"
#include "output_view.h"
#include "real_libc.h"
#include "upper.h"
#include "wire_layout.h"
#include "wrap_change.h"


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

/* After a refused change: the upper directories above key that the cluster does not have, deepest first, are
 * removed when empty (made here for that change; a directory of this node that is not empty stays). */
static void drop_unknown_parents(const fs_state *s, const char *key, size_t len)
{
    char path[PATH_MAX];
    for (size_t i = len; i-- > 1;) {
        if (key[i] != '/')
            continue;
        /* key[0, i) is a parent directory */
        if (fs_ov_lookup_any(s, key, i) >= 0 || fs_up_path(s, key, i, path, sizeof path) < 0 ||
            CALL_REAL(-1, rmdir, path) != 0)
            return;
    }
}

/* mkdir of inside key k: made in the upper tree, then recorded so other ranks see the directory (a record the
 * owner refuses undoes it: the mkdir fails). FORWARD when a link led out of the namespace (forward k->buf). */
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
    if (CALL_REAL(-1, fstatat, AT_FDCWD, k->buf, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return FS_CHANGE_DONE;
    /* Refused (another rank's file or directory took the name first, the parent went): the directory is not the
     * cluster's, so it goes again (it is empty unless another process of this node filled it at once: then it
     * stays, and its files' publishes say why) and mkdir fails as the owner answered. */
    int refused = fs_up_notify(FS_OP_MKDIR, key, key_len, NULL, 0, st.st_mode & 07777);
    if (refused < 0 && refused != -ENOSYS) {
        (void)CALL_REAL(-1, rmdir, k->buf);
        drop_unknown_parents(s, key, key_len);
        return (fs_change)refused;
    }
    return FS_CHANGE_DONE;
}

/* Directory key was removed here, so no file of this node lies below it any more; records of its files still in
 * the journal (removed without the shim) are withdrawn, so other ranks see them go. Another rank's file or any
 * directory is never withdrawn: one that landed there since the emptiness check makes the RMDIR fail. */
static void forget_below(const fs_state *s, const char *key, size_t len)
{
    uint32_t slots[256];
    size_t n = fs_ov_keys_below(s, key, len, slots, sizeof slots / sizeof slots[0]);
    for (size_t i = 0; i < n; i++) {
        size_t kl;
        const char *k = fs_ov_key(slots[i], &kl);
        const fs_ov_state *st = fs_ov_state_any(slots[i]);
        if (st != NULL && !S_ISDIR(st->mode) && st->own)
            fs_up_notify(FS_OP_UNLINK, k, kl, NULL, 0, 0);
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
        struct stat st;
        if (dir && CALL_REAL(-1, fstatat, AT_FDCWD, k->buf, &st, AT_SYMLINK_NOFOLLOW) != 0)
            return -errno;
        if ((dir ? CALL_REAL(-1, rmdir, k->buf) : CALL_REAL(-1, unlink, k->buf)) != 0)
            return -errno;
        if (dir)
            forget_below(s, key, (size_t)kl);
        if (fs_ov_lookup_any(s, key, (size_t)kl) < 0)
            return FS_CHANGE_DONE;
        int refused = fs_up_notify(dir ? FS_OP_RMDIR : FS_OP_UNLINK, key, (size_t)kl, NULL, 0, 0);
        if (dir && refused < 0 && refused != -ENOSYS) {
            /* another rank's file landed in it meanwhile (ENOTEMPTY at the owner): the directory stays */
            (void)CALL_REAL(-1, mkdir, k->buf, st.st_mode & 07777);
            return (fs_change)refused;
        }
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
        if (fs_ov_lookup_any(s, akey, alen) >= 0 || fs_ov_any_below(s, akey, alen, 0)) {
            int refused = fs_up_notify(FS_OP_RENAME, akey, alen, bkey, blen, 0);
            if (refused < 0 && refused != -ENOSYS) {
                /* the cluster kept the source (the target's directory went, or its name is taken): so does this
                 * node, and the directories made here for the target go again when empty */
                (void)(flags ? CALL_REAL(-1, renameat2, AT_FDCWD, bpath, AT_FDCWD, a.buf, flags & RENAME_EXCHANGE)
                             : CALL_REAL(-1, rename, bpath, a.buf));
                drop_unknown_parents(s, bkey, blen);
                return refused;
            }
        } else if (fs_ov_lookup_any(s, bkey, blen) >= 0) {
            fs_up_notify(FS_OP_UNLINK, bkey, blen, NULL, 0, 0);
        }
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
