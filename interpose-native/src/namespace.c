/* namespace: classifying paths and the index space of entries and outputs (see namespace.h).
 * Classification is lexical (path_norm.h) against the mount and the current directory (cwd.h); a relative path
 * from a real directory descriptor costs one readlink of its /proc name, paid only when it may reach the mount.
 * Symlinks and the upper tree: namespace_resolve.c; stat pictures and access: namespace_stat.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cwd.h"
#include "namespace.h"
#include "output_view.h"
#include "real_libc.h"
#include "upper.h"

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
 * that other ranks hear of it; a lookup there is left to the kernel (fs_ns_retry_lookup takes over when it fails). */
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

int fs_ns_retry_lookup(const fs_state *s, int dirfd, const char *path, fs_key *k)
{
    int err = errno;
    if ((err != ENOENT && err != ENOTDIR) || s == NULL || path == NULL || path[0] == '/' || path[0] == '\0' ||
        dirfd == AT_FDCWD)
        return 0;
    const char *p = path;
    fs_path_class c = classify_any(s, dirfd, &p, k, 1);
    errno = err;
    return c == FS_PATH_INSIDE;
}

uint32_t fs_ns_mode(const fs_table *t, uint32_t idx)
{
    if (!fs_ns_is_output(t, idx))
        return fs_entry_mode(t, fs_table_entry(t, idx));
    const fs_ov_state *st = fs_ov_state_of(idx - (uint32_t)t->entry_count);
    return st != NULL ? st->mode : 0;
}

ssize_t fs_ns_key(const fs_table *t, uint32_t idx, char *buf, size_t cap)
{
    if (!fs_ns_is_output(t, idx))
        return fs_table_key(t, idx, buf, cap);
    size_t len;
    const char *key = fs_ov_key(idx - (uint32_t)t->entry_count, &len);
    if (len >= cap)
        return -ENAMETOOLONG;
    memcpy(buf, key, len);
    buf[len] = '\0';
    return (ssize_t)len;
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
    size_t n = s->mount_len;
    if (n + 2 > cap)
        return -ENAMETOOLONG;
    /* The key lands after mount + "/"; the '/' stays only when the key is not empty. */
    ssize_t key_len = fs_ns_key(t, idx, buf + n + 1, cap - n - 1);
    if (key_len < 0)
        return key_len;
    memcpy(buf, s->mount, n);
    if (key_len == 0) {
        buf[n] = '\0';
        return (ssize_t)n;
    }
    buf[n] = '/';
    return (ssize_t)(n + 1 + (size_t)key_len);
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

int fs_ns_empty_path(const char *path)
{
    return path == NULL || path[0] == '\0';
}
