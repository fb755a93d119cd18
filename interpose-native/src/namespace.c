/* namespace: key resolution and stat pictures, straight from the immutable table (no locks needed).
 * Symlinks: a target is relative to the link's directory or absolute; the joined path is normalised and
 * classified again, so a link may lead out of the namespace (the caller then forwards to libc) but a `..`
 * can never make an outside path look like a key. At most 40 links per resolution, as Linux (ELOOP). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cwd.h"
#include "namespace.h"
#include "output_view.h"
#include "real_libc.h"
#include "upper.h"

#define MAX_LINKS 40

_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "stat and stat64 share one layout here");

static fs_path_class classify(const fs_state *s, int dirfd, const char *path, fs_key *k, int changes);

/* "x/", "x/." and "x/.." can only name directories. */
static int names_directory(const char *path)
{
    size_t n = strlen(path);
    if (n > 0 && path[n - 1] == '/')
        return 1;
    if (n >= 2 && path[n - 1] == '.' && path[n - 2] == '/')
        return 1;
    return n >= 3 && path[n - 1] == '.' && path[n - 2] == '.' && path[n - 3] == '/';
}

/* "x/.." is lexically the directory holding x, but the kernel walks x first: ENOTDIR when x is a file, ENOENT
 * when it is missing. Each ".." component's prefix that lies in the namespace must therefore be a directory
 * (symlinks followed, so "link-to-dir/.." stays valid). Only paths holding ".." pay for this. */
static int dotdot_prefixes_are_dirs(const fs_state *s, int dirfd, const char *path, int changes)
{
    const fs_table *t = fs_state_table();
    if (t == NULL)
        return 0;
    for (const char *d = path; (d = strstr(d, "..")) != NULL; d += 2) {
        if (!((d == path || d[-1] == '/') && (d[2] == '/' || d[2] == '\0')))
            continue;
        size_t plen = (size_t)(d - path);
        while (plen > 1 && path[plen - 1] == '/')
            plen--;
        if (plen == 0 || (plen == 1 && path[0] == '/'))
            continue;
        char prefix[PATH_MAX];
        if (plen >= sizeof prefix)
            return -ENAMETOOLONG;
        memcpy(prefix, path, plen);
        prefix[plen] = '\0';
        fs_key pk;
        if (classify(s, dirfd, prefix, &pk, changes) != FS_PATH_INSIDE)
            continue;
        pk.want_dir = 1;
        uint32_t idx;
        fs_resolved rc = fs_ns_resolve(s, t, &pk, 1, &idx);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static fs_path_class classify_any(const fs_state *s, int dirfd, const char **path, fs_key *k, int changes)
{
    fs_path_class c = classify(s, dirfd, *path, k, changes);
    if ((c == FS_PATH_INSIDE || c == FS_PATH_REWRITTEN) && strstr(*path, "..") != NULL) {
        int rc = dotdot_prefixes_are_dirs(s, dirfd, *path, changes);
        if (rc < 0)
            return rc;
    }
    if (c == FS_PATH_REWRITTEN) {
        *path = k->buf;
        return FS_PATH_OUTSIDE;
    }
    if (c == FS_PATH_INSIDE)
        k->want_dir = names_directory(*path);
    return c;
}

/* Is path's first component one of the mount path's components? Only then can a walk from a real directory
 * descriptor (rsync walks "/" then "fanstore" with openat, one component at a time) enter the namespace. */
static int may_enter_mount(const fs_state *s, const char *path)
{
    const char *slash = strchr(path, '/');
    size_t n = slash != NULL ? (size_t)(slash - path) : strlen(path);
    if (n == 0 || (n == 2 && path[0] == '.' && path[1] == '.'))
        return n == 2;
    for (const char *m = s->mount; (m = strchr(m, '/')) != NULL;) {
        m++;
        const char *end = strchr(m, '/');
        size_t len = end != NULL ? (size_t)(end - m) : strlen(m);
        if (len == n && memcmp(m, path, n) == 0)
            return 1;
    }
    return 0;
}

/* A relative path from a real directory descriptor (not one of ours): inside only when the joined path lands in
 * the mount, which needs the descriptor's name (one readlink, paid only when may_enter_mount). A change (changes)
 * relative to a directory of the upper tree (rm -r and cp -a work from descriptors) is one of the namespace's, so
 * that other ranks hear of it; a lookup there is left to the kernel. */
static fs_path_class classify_from_real_dir(const fs_state *s, int dirfd, const char *path, fs_key *k, int changes)
{
    if (!changes && !may_enter_mount(s, path))
        return FS_PATH_OUTSIDE;
    char proc[64], dir[PATH_MAX];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", dirfd);
    ssize_t n = CALL_REAL(-1, readlink, proc, dir, sizeof dir - 1);
    if (n <= 0 || dir[0] != '/')
        return FS_PATH_OUTSIDE;
    dir[n] = '\0';
    int m = fs_up_mount_path(s, dir, (size_t)n, k->buf, sizeof k->buf);
    if (m != -ENOENT) {
        if (!changes || m < 0)
            return FS_PATH_OUTSIDE;   /* a lookup in the upper tree: the kernel walks it */
        memcpy(dir, k->buf, (size_t)m + 1);
        n = m;
    } else if (!may_enter_mount(s, path)) {
        return FS_PATH_OUTSIDE;
    }
    fs_ns ns = { .mount = s->mount, .mount_len = s->mount_len, .cwd = dir, .cwd_len = (size_t)n,
                 .cwd_near = fs_path_cwd_near(s->mount, s->mount_len, dir, (size_t)n) };
    fs_path_class c = fs_path_classify(&ns, path, k->buf, sizeof k->buf, &k->len);
    return c == FS_PATH_REWRITTEN ? FS_PATH_OUTSIDE : c;
}

fs_path_class fs_ns_classify(const fs_state *s, int dirfd, const char **path, fs_key *k)
{
    return classify_any(s, dirfd, path, k, 0);
}

fs_path_class fs_ns_classify_change(const fs_state *s, int dirfd, const char **path, fs_key *k)
{
    return classify_any(s, dirfd, path, k, 1);
}

static fs_path_class classify(const fs_state *s, int dirfd, const char *path, fs_key *k, int changes)
{
    if (s == NULL || path == NULL)
        return FS_PATH_OUTSIDE;
    fs_ns ns = { .mount = s->mount, .mount_len = s->mount_len };
    char base[PATH_MAX];
    if (path[0] == '/')
        return fs_path_classify(&ns, path, k->buf, sizeof k->buf, &k->len);
    if (dirfd == AT_FDCWD) {
        fs_cwd_ns(s, &ns, base);
        return fs_path_classify(&ns, path, k->buf, sizeof k->buf, &k->len);
    }
    fs_fd_info info;
    if (fs_fd_get(dirfd, &info) != FS_FD_DIR)
        return classify_from_real_dir(s, dirfd, path, k, changes);
    const fs_table *t = fs_state_table();
    if (t == NULL || (fs_ns_is_output(t, info.index) && fs_ns_mode(t, info.index) == 0))
        return t == NULL ? -EIO : -ENOENT;   /* an output directory removed since it was opened */
    ssize_t n = fs_ns_entry_path(s, t, info.index, base, sizeof base);
    if (n < 0)
        return (int)n;
    ns.cwd = base;
    ns.cwd_len = (size_t)n;
    ns.cwd_near = 1;
    return fs_path_classify(&ns, path, k->buf, sizeof k->buf, &k->len);
}

uint32_t fs_ns_mode(const fs_table *t, uint32_t idx)
{
    if (!fs_ns_is_output(t, idx))
        return fs_table_entry(t, idx)->mode;
    const fs_ov_state *st = fs_ov_state_of(idx - (uint32_t)t->entry_count);
    return st != NULL ? st->mode : 0;
}

const char *fs_ns_key(const fs_table *t, uint32_t idx, size_t *len)
{
    if (fs_ns_is_output(t, idx))
        return fs_ov_key(idx - (uint32_t)t->entry_count, len);
    const fs_entry *e = fs_table_entry(t, idx);
    *len = e->key_len;
    return fs_entry_key(t, e);
}

int64_t fs_ns_find(const fs_state *s, const fs_table *t, const char *key, size_t len)
{
    int64_t idx = fs_table_lookup(t, key, len);
    if (idx >= 0)
        return idx;
    int64_t slot = fs_ov_lookup(s, key, len, NULL);
    return slot < 0 ? -1 : (int64_t)t->entry_count + slot;
}

ssize_t fs_ns_entry_path(const fs_state *s, const fs_table *t, uint32_t idx, char *buf, size_t cap)
{
    size_t key_len;
    const char *key = fs_ns_key(t, idx, &key_len);
    size_t n = s->mount_len;
    if (n + 1 + key_len + 1 > cap)
        return -ENAMETOOLONG;
    memcpy(buf, s->mount, n);
    if (key_len > 0) {
        buf[n++] = '/';
        memcpy(buf + n, key, key_len);
        n += key_len;
    }
    buf[n] = '\0';
    return (ssize_t)n;
}

/* Replaces k = <link key (link_len bytes)><rest> by the link's target joined with rest, classified again. */
static fs_resolved substitute(const fs_state *s, const fs_table *t, fs_key *k, size_t link_len, const fs_entry *link)
{
    char joined[PATH_MAX];
    const char *target = fs_entry_link_target(t, link);
    size_t tlen = link->child_count;
    size_t rest = k->len - link_len;          /* "" or "/..." */
    size_t n = 0;
    if (target[0] != '/') {
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
    UPPER_FOUND     = 1,       /* k now holds its real path: forward it */
    UPPER_RELINKED  = 2,       /* an absolute symlink into the mount: k now holds the target's key (resolve again) */
} upper_probe;

/* Is key k in this node's upper tree? */
static upper_probe in_upper(const fs_state *s, fs_key *k, int follow_last)
{
    char path[PATH_MAX];
    int n = fs_up_path(s, k->buf, k->len, path, sizeof path);
    struct stat st;
    if (n < 0 || CALL_REAL(-1, fstatat, AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return UPPER_ABSENT;
    if (S_ISLNK(st.st_mode) && follow_last) {
        char target[PATH_MAX];
        ssize_t tl = CALL_REAL(-1, readlink, path, target, sizeof target - 1);
        if (tl > 0 && target[0] == '/') {
            target[tl] = '\0';
            fs_ns ns = { .mount = s->mount, .mount_len = s->mount_len };
            fs_key next;
            if (fs_path_classify(&ns, target, next.buf, sizeof next.buf, &next.len) == FS_PATH_INSIDE) {
                memcpy(k->buf, next.buf, next.len + 1);
                k->len = next.len;
                return UPPER_RELINKED;
            }
        }
    } else if (k->want_dir && !S_ISDIR(st.st_mode)) {
        return (upper_probe)-ENOTDIR;
    }
    memcpy(k->buf, path, (size_t)n + 1);
    k->len = (size_t)n;
    return UPPER_FOUND;
}

fs_resolved fs_ns_create_path(const fs_state *s, const fs_table *t, fs_key *k)
{
    if (k->len == 0)
        return -EEXIST;
    int rc = fs_ns_parent_exists(s, t, k);
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
                continue;
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
            if (!(S_ISLNK(e->mode) && follow_last)) {
                if (k->want_dir && !S_ISDIR(e->mode))
                    return -ENOTDIR;
                *index = (uint32_t)idx;
                return FS_RESOLVED_INSIDE;
            }
            int rc = substitute(s, t, k, k->len, e);
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
            if (S_ISLNK(e->mode)) {
                int rc = substitute(s, t, k, i, e);
                if (rc != FS_RESOLVED_INSIDE)
                    return rc;
                moved = 1;
                break;
            }
            if (!S_ISDIR(e->mode))
                return -ENOTDIR;
        }
        if (!moved)
            return -ENOENT;
    }
    return -ELOOP;
}

int fs_ns_parent_exists(const fs_state *s, const fs_table *t, const fs_key *k)
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

static uint64_t blocks_of(const fs_entry *e)
{
    if (S_ISLNK(e->mode))
        return 0;
    return (e->size + 4095) / 4096 * 8;
}

static uint32_t nlink_of(const fs_table *t, const fs_entry *e)
{
    if (!S_ISDIR(e->mode))
        return 1;
    uint32_t n = 2;
    for (uint32_t i = 0; i < e->child_count; i++) {
        uint64_t c = (uint64_t)e->first_child + i;
        if (c < t->children_count && S_ISDIR(fs_table_entry(t, t->children[c])->mode))
            n++;
    }
    return n;
}

/* The stat picture of a committed output: owned by the job's user, mtime as committed. */
static void output_stat(const fs_table *t, uint32_t idx, struct stat *st)
{
    const fs_ov_state *o = fs_ov_state_of(idx - (uint32_t)t->entry_count);
    memset(st, 0, sizeof *st);
    st->st_dev = t->st_dev;
    st->st_ino = (ino_t)idx + 1;
    if (o == NULL)
        return;
    st->st_mode = o->mode;
    st->st_nlink = S_ISDIR(o->mode) ? 2 : 1;
    st->st_uid = getuid();
    st->st_gid = getgid();
    st->st_size = S_ISDIR(o->mode) ? 4096 : (off_t)o->size;
    st->st_blksize = 4096;
    st->st_blocks = (blkcnt_t)((st->st_size + 4095) / 4096 * 8);
    st->st_mtim.tv_sec = o->mtime_ns / 1000000000;
    st->st_mtim.tv_nsec = o->mtime_ns % 1000000000;
    st->st_atim = st->st_mtim;
    st->st_ctim = st->st_mtim;
}

void fs_ns_stat(const fs_table *t, uint32_t idx, struct stat *st)
{
    if (fs_ns_is_output(t, idx)) {
        output_stat(t, idx, st);
        return;
    }
    const fs_entry *e = fs_table_entry(t, idx);
    memset(st, 0, sizeof *st);
    st->st_dev = t->st_dev;
    st->st_ino = (ino_t)idx + 1;
    st->st_mode = e->mode;
    st->st_nlink = nlink_of(t, e);
    st->st_uid = e->uid;
    st->st_gid = e->gid;
    st->st_size = (off_t)e->size;
    st->st_blksize = 4096;
    st->st_blocks = (blkcnt_t)blocks_of(e);
    st->st_mtim.tv_sec = e->mtime_sec;
    st->st_mtim.tv_nsec = e->mtime_nsec;
    st->st_atim = st->st_mtim;
    st->st_ctim = st->st_mtim;
}

void fs_ns_statx(const fs_table *t, uint32_t idx, struct statx *stx)
{
    if (fs_ns_is_output(t, idx)) {
        struct stat st;
        output_stat(t, idx, &st);
        memset(stx, 0, sizeof *stx);
        stx->stx_mask = STATX_BASIC_STATS;
        stx->stx_blksize = 4096;
        stx->stx_nlink = (uint32_t)st.st_nlink;
        stx->stx_uid = st.st_uid;
        stx->stx_gid = st.st_gid;
        stx->stx_mode = (uint16_t)st.st_mode;
        stx->stx_ino = st.st_ino;
        stx->stx_size = (uint64_t)st.st_size;
        stx->stx_blocks = (uint64_t)st.st_blocks;
        stx->stx_mtime.tv_sec = st.st_mtim.tv_sec;
        stx->stx_mtime.tv_nsec = (uint32_t)st.st_mtim.tv_nsec;
        stx->stx_atime = stx->stx_mtime;
        stx->stx_ctime = stx->stx_mtime;
        stx->stx_dev_major = major(t->st_dev);
        stx->stx_dev_minor = minor(t->st_dev);
        return;
    }
    const fs_entry *e = fs_table_entry(t, idx);
    memset(stx, 0, sizeof *stx);
    stx->stx_mask = STATX_BASIC_STATS;   /* everything but btime/mnt_id; the table has no birth time */
    stx->stx_blksize = 4096;
    stx->stx_nlink = nlink_of(t, e);
    stx->stx_uid = e->uid;
    stx->stx_gid = e->gid;
    stx->stx_mode = (uint16_t)e->mode;
    stx->stx_ino = (uint64_t)idx + 1;
    stx->stx_size = e->size;
    stx->stx_blocks = blocks_of(e);
    stx->stx_attributes_mask = STATX_ATTR_IMMUTABLE;
    stx->stx_mtime.tv_sec = e->mtime_sec;
    stx->stx_mtime.tv_nsec = e->mtime_nsec;
    stx->stx_atime = stx->stx_mtime;
    stx->stx_ctime = stx->stx_mtime;
    stx->stx_dev_major = major(t->st_dev);
    stx->stx_dev_minor = minor(t->st_dev);
}

static uint64_t total_blocks(const fs_table *t)
{
    uint64_t b = 0;
    for (uint64_t i = 0; i < t->entry_count; i++)
        b += (t->entries[i].size + 4095) / 4096;
    return b;
}

void fs_ns_statfs(const fs_table *t, struct statfs *sf)
{
    memset(sf, 0, sizeof *sf);
    sf->f_type = FS_NS_MAGIC;
    sf->f_bsize = 4096;
    sf->f_frsize = 4096;
    sf->f_blocks = total_blocks(t);
    sf->f_files = t->entry_count;
    sf->f_namelen = 255;
    memcpy(&sf->f_fsid, &t->st_dev, sizeof t->st_dev);
    sf->f_flags = ST_NOSUID | ST_NODEV;   /* writable: the job creates outputs here */
}

void fs_ns_statvfs(const fs_table *t, struct statvfs *sv)
{
    memset(sv, 0, sizeof *sv);
    sv->f_bsize = 4096;
    sv->f_frsize = 4096;
    sv->f_blocks = total_blocks(t);
    sv->f_files = t->entry_count;
    sv->f_fsid = t->st_dev;
    sv->f_flag = ST_NOSUID | ST_NODEV;
    sv->f_namemax = 255;
}

uint32_t fs_ns_fd(int fd, fs_fd_info *info, struct stat *real)
{
    if (fs_fd_get(fd, info) == FS_FD_NONE)
        return FS_FD_NONE;
    struct stat st;
    if (real == NULL)
        real = &st;
    if (CALL_REAL(-1, fstat, fd, real) != 0)
        return FS_FD_NONE;
    if ((uint64_t)real->st_dev != info->dev || (uint64_t)real->st_ino != info->ino) {
        if (!fs_state_in_vfork_child())
            fs_fd_clear(fd);            /* stale: closed behind our back, number reused */
        return FS_FD_NONE;
    }
    return info->kind;
}

int fs_ns_access(const fs_table *t, uint32_t idx, int mode, int effective)
{
    if (fs_ns_is_output(t, idx))
        return 0;   /* the job's own files: it may read them and write them anew */
    const fs_entry *e = fs_table_entry(t, idx);
    if (mode == F_OK)
        return 0;
    if (mode & W_OK)
        return -EROFS;
    uid_t uid = effective ? geteuid() : getuid();
    gid_t gid = effective ? getegid() : getgid();
    unsigned bits;
    if (uid == 0) {
        /* root reads anything and executes when any x bit is set (or for a directory). */
        if ((mode & X_OK) && !S_ISDIR(e->mode) && !(e->mode & 0111))
            return -EACCES;
        return 0;
    }
    if (uid == e->uid)
        bits = (e->mode >> 6) & 7;
    else if (gid == e->gid || group_member(e->gid))
        bits = (e->mode >> 3) & 7;
    else
        bits = e->mode & 7;
    if ((mode & R_OK) && !(bits & 4))
        return -EACCES;
    if ((mode & X_OK) && !(bits & 1))
        return -EACCES;
    return 0;
}

int fs_ns_empty_path(const char *path)
{
    return path == NULL || path[0] == '\0';
}
