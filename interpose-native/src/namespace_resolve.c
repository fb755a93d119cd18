/* namespace_resolve: following a key through symlinks and into this node's upper tree (see namespace.h).
 * Symlinks: a target is relative to the link's directory or absolute; the joined path is normalised and
 * classified again, so a link may lead out of the namespace (the caller then forwards to libc) but a `..`
 * can never make an outside path look like a key. At most MAX_LINKS links per resolution, as Linux (ELOOP).
 * Order: the table first (inputs are never shadowed), then this node's upper tree (one fstatat; a symlink there is
 * followed here, not by the kernel, which cannot follow a target in the mount), then the committed outputs of other
 * ranks (output_view.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "namespace.h"
#include "output_view.h"
#include "real_libc.h"
#include "upper.h"

#define MAX_LINKS 40

/* Replaces k = <link key (link_len bytes)><rest> by the link's target (tlen bytes) joined with rest, classified
 * again. */
static fs_resolved substitute(const fs_state *s, fs_key *k, size_t link_len, const char *target, size_t tlen)
{
    char joined[PATH_MAX];
    size_t rest = k->len - link_len;          /* "" or "/..." */
    size_t n = 0;
    if (tlen == 0 || target[0] != '/') {
        /* Relative target: starts in the directory holding the link. */
        const char *key = k->buf;
        size_t dir = link_len;
        while (dir > 0 && key[dir - 1] != '/')
            dir--;
        if (s->mount_len + 1 + dir + tlen + rest + 1 > sizeof joined)
            return -ENAMETOOLONG;
        memcpy(joined, s->mount, s->mount_len);
        n = s->mount_len;
        joined[n++] = '/';
        memcpy(joined + n, key, dir);
        n += dir;
    } else if (tlen + rest + 1 > sizeof joined) {
        return -ENAMETOOLONG;
    }
    memcpy(joined + n, target, tlen);
    n += tlen;
    memcpy(joined + n, k->buf + link_len, rest);
    n += rest;
    joined[n] = '\0';
    fs_ns ns = { .mount = s->mount, .mount_len = s->mount_len };
    fs_path_class c = fs_path_classify(&ns, joined, k->buf, sizeof k->buf, &k->len);
    if (c < 0)
        return (fs_resolved)(int)c;   /* the same -errno */
    if (c == FS_PATH_OUTSIDE) {
        /* Keep the joined path as given (libc and the kernel resolve it from here). */
        memcpy(k->buf, joined, n + 1);
        k->len = n;
        return FS_RESOLVED_OUTSIDE;
    }
    return FS_RESOLVED_INSIDE;
}

/* What in_upper found for a key the table does not hold, or a negative errno. */
typedef enum upper_probe {
    UPPER_ERRNO     = -4095,   /* marks that [-4095, -1] holds -errno values (-ENOTDIR: k must be a directory) */
    UPPER_ABSENT    = 0,       /* not in the upper tree */
    UPPER_FOUND     = 1,       /* k now holds its real path, or a symlink's outside target: forward it */
    UPPER_RELINKED  = 2,       /* a symlink of the upper tree: k now holds its target's key (resolve again) */
} upper_probe;

/* The upper tree's symlink at real path `real`, key prefix [0, link_len) of k: k becomes its target joined with the
 * rest. The kernel cannot follow these itself: an absolute target names the mount, and a relative one may lead
 * (by "..") to an input, which is not in the upper tree. Following them here also counts them (ELOOP). */
static upper_probe upper_link(const fs_state *s, fs_key *k, size_t link_len, const char *real)
{
    char target[PATH_MAX];
    ssize_t tl = CALL_REAL(-1, readlink, real, target, sizeof target - 1);
    if (tl <= 0)
        return UPPER_ABSENT;           /* replaced since the lstat: the caller's walk goes on from the table */
    fs_resolved rc = substitute(s, k, link_len, target, (size_t)tl);
    if (rc < 0)
        return (upper_probe)(int)rc;
    return rc == FS_RESOLVED_INSIDE ? UPPER_RELINKED : UPPER_FOUND;
}

/* The kernel could not walk <upper>/k (ENOENT, ENOTDIR): a directory component may be a symlink it cannot follow.
 * Walks k's directory components in the upper tree; the first symlink is followed, a missing one ends the walk. */
static upper_probe upper_walk(const fs_state *s, fs_key *k, char *real, size_t real_len)
{
    size_t base = real_len - k->len;   /* real = <upper>/<key>: k's byte i is real's byte base + i */
    for (size_t i = 1; i < k->len; i++) {
        if (k->buf[i] != '/')
            continue;
        real[base + i] = '\0';
        struct stat st;
        int rc = CALL_REAL(-1, fstatat, AT_FDCWD, real, &st, AT_SYMLINK_NOFOLLOW);
        real[base + i] = '/';
        if (rc != 0)
            return UPPER_ABSENT;
        if (S_ISLNK(st.st_mode)) {
            real[base + i] = '\0';
            return upper_link(s, k, i, real);
        }
        if (!S_ISDIR(st.st_mode))
            return (upper_probe)-ENOTDIR;
    }
    return UPPER_ABSENT;
}

/* Is key k in this node's upper tree? */
static upper_probe in_upper(const fs_state *s, fs_key *k, int follow_last)
{
    char path[PATH_MAX];
    int n = fs_up_path(s, k->buf, k->len, path, sizeof path);
    struct stat st;
    if (n < 0)
        return UPPER_ABSENT;
    if (CALL_REAL(-1, fstatat, AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ELOOP)
            return (upper_probe)-ELOOP;   /* relative links in a loop: the kernel counted them */
        return errno == ENOENT || errno == ENOTDIR ? upper_walk(s, k, path, (size_t)n) : UPPER_ABSENT;
    }
    if (S_ISLNK(st.st_mode) && follow_last)
        return upper_link(s, k, k->len, path);
    if (k->want_dir && !S_ISDIR(st.st_mode))
        return (upper_probe)-ENOTDIR;
    memcpy(k->buf, path, (size_t)n + 1);
    k->len = (size_t)n;
    return UPPER_FOUND;
}

/* Resolves the parent directory of k (for "create here" questions). 0 when it exists as a directory. */
static int parent_exists(const fs_state *s, const fs_table *t, const fs_key *k)
{
    if (k->len == 0)
        return 0;   /* the mount's parent is real */
    fs_key parent;
    parent.want_dir = 1;
    size_t n = k->len;
    while (n > 0 && k->buf[n - 1] != '/')
        n--;
    parent.len = n > 0 ? n - 1 : 0;
    memcpy(parent.buf, k->buf, parent.len);
    parent.buf[parent.len] = '\0';
    uint32_t idx;
    fs_resolved rc = fs_ns_resolve(s, t, &parent, 1, &idx);
    if (rc == FS_RESOLVED_OUTSIDE)
        return 0;
    if (rc < 0)
        return rc;
    return S_ISDIR(fs_ns_mode(t, idx)) ? 0 : -ENOTDIR;
}

fs_resolved fs_ns_create_path(const fs_state *s, const fs_table *t, fs_key *k)
{
    if (k->len == 0)
        return -EEXIST;
    int rc = parent_exists(s, t, k);
    if (rc < 0)
        return rc;
    rc = fs_up_make_parents(s, k->buf, k->len);
    if (rc < 0)
        return rc;
    char path[PATH_MAX];
    int n = fs_up_path(s, k->buf, k->len, path, sizeof path);
    if (n < 0)
        return n;
    memcpy(k->buf, path, (size_t)n + 1);
    k->len = (size_t)n;
    return FS_RESOLVED_OUTSIDE;
}

fs_resolved fs_ns_resolve(const fs_state *s, const fs_table *t, fs_key *k, int follow_last, uint32_t *index)
{
    if (k->want_dir)
        follow_last = 1;           /* "link/" names the link's target, as in the kernel */
    for (int links = 0; links <= MAX_LINKS; links++) {
        int64_t idx = fs_table_lookup(t, k->buf, k->len);
        if (idx < 0) {
            upper_probe u = in_upper(s, k, follow_last);
            if (u == UPPER_FOUND)
                return FS_RESOLVED_OUTSIDE;
            if (u == UPPER_RELINKED)
                continue;          /* one more link */
            if (u < 0)
                return (fs_resolved)(int)u;   /* the same -errno */
        }
        if (idx < 0 && (idx = fs_ns_find(s, t, k->buf, k->len)) >= 0) {
            /* a committed output: never a symlink */
            if (k->want_dir && !S_ISDIR(fs_ns_mode(t, (uint32_t)idx)))
                return -ENOTDIR;
            *index = (uint32_t)idx;
            return FS_RESOLVED_INSIDE;
        }
        if (idx >= 0) {
            const fs_entry *e = fs_table_entry(t, (uint32_t)idx);
            uint32_t mode = fs_entry_mode(t, e);
            if (!(S_ISLNK(mode) && follow_last)) {
                if (k->want_dir && !S_ISDIR(mode))
                    return -ENOTDIR;
                *index = (uint32_t)idx;
                return FS_RESOLVED_INSIDE;
            }
            int rc = substitute(s, k, k->len, fs_entry_link_target(t, e), (size_t)fs_entry_size(e));
            if (rc != FS_RESOLVED_INSIDE)
                return rc;
            continue;
        }
        /* Not a key as written: find the first component that is missing, a file, or a symlink. */
        int moved = 0;
        for (size_t i = 0; i < k->len; i++) {
            if (k->buf[i] != '/')
                continue;
            int64_t p = fs_table_lookup(t, k->buf, i);
            if (p < 0) {
                p = fs_ns_find(s, t, k->buf, i);
                if (p < 0)
                    return -ENOENT;
                if (!S_ISDIR(fs_ns_mode(t, (uint32_t)p)))
                    return -ENOTDIR;
                continue;
            }
            const fs_entry *e = fs_table_entry(t, (uint32_t)p);
            uint32_t mode = fs_entry_mode(t, e);
            if (S_ISLNK(mode)) {
                int rc = substitute(s, k, i, fs_entry_link_target(t, e), (size_t)fs_entry_size(e));
                if (rc != FS_RESOLVED_INSIDE)
                    return rc;
                moved = 1;
                break;
            }
            if (!S_ISDIR(mode))
                return -ENOTDIR;
        }
        if (!moved)
            return -ENOENT;
    }
    return -ELOOP;
}
