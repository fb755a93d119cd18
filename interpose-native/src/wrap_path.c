/* wrap_path: calls that answer with or about a path rather than a descriptor: realpath (and its fortified
 * and GNU spellings), readlink, the current directory (chdir, fchdir, getcwd), extended attributes and
 * file-system statistics.
 * Errors chosen: getxattr on an entry -> ENODATA (no attributes, as a file system without xattrs that
 * supports the call: ls -l prints no '+'); listxattr -> 0 (empty list); set/remove -> EROFS; readlink on a
 * non-link -> EINVAL. The current directory is always a real one: a namespace directory's place in the upper
 * tree (made on entry), so it survives vfork, posix_spawn and exec with any environment; getcwd names it by its
 * namespace path (shim_state.c). This node's outputs carry real extended attributes. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cwd.h"
#include "namespace.h"
#include "real_libc.h"
#include "upper.h"

/* Resolves an inside key to an entry (following the last link when follow). Returns INSIDE/OUTSIDE or
 * -errno, with s/t filled. */
static fs_resolved lookup(fs_path_class c, fs_key *k, int follow, const fs_state **s, const fs_table **t,
                          uint32_t *idx)
{
    if (c < 0)
        return (fs_resolved)(int)c;   /* the same -errno */
    *s = fs_state_get();
    *t = fs_state_table();
    if (*s == NULL || *t == NULL)
        return -EIO;
    return fs_ns_resolve(*s, *t, k, follow, idx);
}

/* ---- realpath ---------------------------------------------------------------------------------- */

static char *realpath_key(fs_path_class c, fs_key *k, char *resolved, size_t cap)
{
    const fs_state *s;
    const fs_table *t;
    uint32_t idx;
    fs_resolved rc = lookup(c, k, 1, &s, &t, &idx);
    char path[PATH_MAX];
    ssize_t n;
    if (rc == FS_RESOLVED_OUTSIDE) {
        char real[PATH_MAX];
        if (CALL_REAL(NULL, realpath, k->buf, real) == NULL)
            return NULL;
        n = fs_up_mount_path(s, real, strlen(real), path, sizeof path);
        if (n == -ENOENT) {
            n = (ssize_t)strlen(real);
            memcpy(path, real, (size_t)n + 1);
        }
    } else if (rc < 0) {
        return (fs_fail(rc), NULL);
    } else {
        n = fs_ns_entry_path(s, t, idx, path, sizeof path);
    }
    if (n < 0)
        return (fs_fail((int)n), NULL);
    if (resolved == NULL)
        return strdup(path);
    if ((size_t)n + 1 > cap)
        return (fs_fail(-ENAMETOOLONG), NULL);
    memcpy(resolved, path, (size_t)n + 1);
    return resolved;
}

FS_EXPORT char *realpath(const char *path, char *resolved)
{
    fs_key k;
    fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(NULL, realpath, path, resolved);
    return realpath_key(c, &k, resolved, PATH_MAX);
}

FS_EXPORT char *__realpath_chk(const char *path, char *resolved, size_t resolvedlen)
{
    fs_key k;
    fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(NULL, __realpath_chk, path, resolved, resolvedlen);
    return realpath_key(c, &k, resolved, resolvedlen < PATH_MAX ? resolvedlen : PATH_MAX);
}

FS_EXPORT char *canonicalize_file_name(const char *path)
{
    fs_key k;
    fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(NULL, canonicalize_file_name, path);
    return realpath_key(c, &k, NULL, 0);
}

/* ---- readlink ---------------------------------------------------------------------------------- */

static ssize_t readlink_key(fs_path_class c, fs_key *k, char *buf, size_t size)
{
    const fs_state *s;
    const fs_table *t;
    uint32_t idx;
    fs_resolved rc = lookup(c, k, 0, &s, &t, &idx);
    if (rc == FS_RESOLVED_OUTSIDE)
        return CALL_REAL(-1, readlink, k->buf, buf, size);
    if (rc < 0)
        return fs_fail(rc);
    if (!S_ISLNK(fs_ns_mode(t, idx)))
        return fs_fail(-EINVAL);
    const fs_entry *e = fs_table_entry(t, idx);
    size_t n = fs_entry_size(e) < size ? (size_t)fs_entry_size(e) : size;
    memcpy(buf, fs_entry_link_target(t, e), n);
    return (ssize_t)n;
}

FS_EXPORT ssize_t readlink(const char *path, char *buf, size_t size)
{
    fs_key k;
    fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, readlink, path, buf, size);
    return readlink_key(c, &k, buf, size);
}

FS_EXPORT ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
    fs_key k;
    fs_path_class c = fs_ns_classify(fs_state_get(), dirfd, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(-1, readlinkat, dirfd, path, buf, size);
    return readlink_key(c, &k, buf, size);
}

/* ---- current directory ------------------------------------------------------------------------- */

/* After a real chdir succeeded: the cwd is read again (not in a vfork child: its memory is its parent's). */
static int entered(const fs_state *s, int rc)
{
    if (rc == 0 && s != NULL && !fs_state_in_vfork_child()) {
        int saved = errno;
        fs_cwd_refresh(s);
        errno = saved;
    }
    return rc;
}

/* Enters namespace directory idx (an input directory, or another rank's output directory): the real cwd becomes
 * its place in the upper tree, made if missing. */
static int enter_dir(const fs_state *s, const fs_table *t, uint32_t idx)
{
    if (!S_ISDIR(fs_ns_mode(t, idx)))
        return fs_fail(-ENOTDIR);
    char key[PATH_MAX], sub[PATH_MAX], path[PATH_MAX];
    ssize_t n = fs_ns_key(t, idx, key, sizeof key);
    if (n < 0 || (size_t)n + 3 > sizeof sub)
        return fs_fail(-ENAMETOOLONG);
    size_t key_len = (size_t)n;
    memcpy(sub, key, key_len);
    memcpy(sub + key_len, key_len > 0 ? "/." : ".", key_len > 0 ? 3 : 2);
    int rc = fs_up_make_parents(s, sub, strlen(sub));
    if (rc == 0)
        rc = fs_up_path(s, key, key_len, path, sizeof path);
    if (rc < 0)
        return fs_fail(rc);
    return entered(s, CALL_REAL(-1, chdir, path));
}

FS_EXPORT int chdir(const char *path)
{
    fs_key k;
    const fs_state *st = fs_state_get();
    fs_path_class c = fs_ns_classify(st, AT_FDCWD, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return entered(st, CALL_REAL(-1, chdir, path));
    const fs_state *s;
    const fs_table *t;
    uint32_t idx;
    fs_resolved rc = lookup(c, &k, 1, &s, &t, &idx);
    if (rc == FS_RESOLVED_OUTSIDE)
        return entered(s, CALL_REAL(-1, chdir, k.buf));
    if (rc < 0)
        return fs_fail(rc);
    return enter_dir(s, t, idx);
}

FS_EXPORT int fchdir(int fd)
{
    const fs_state *s = fs_state_get();
    fs_fd_info info;
    if (s != NULL && fs_fd_get(fd, &info) == FS_FD_DIR && fs_ns_fd(fd, &info, NULL) == FS_FD_DIR) {
        const fs_table *t = fs_state_table();
        if (t == NULL)
            return fs_fail(-EIO);
        return enter_dir(s, t, info.index);
    }
    return entered(s, CALL_REAL(-1, fchdir, fd));
}

FS_EXPORT char *getcwd(char *buf, size_t size)
{
    char path[PATH_MAX];
    const fs_state *s = fs_state_get();
    ssize_t n = s != NULL ? fs_cwd_virtual(s, path, sizeof path) : -1;
    if (n < 0)
        return CALL_REAL(NULL, getcwd, buf, size);
    if (buf == NULL) {
        /* glibc extension: allocate size bytes, or as many as needed when size is 0. */
        size_t want = size == 0 ? (size_t)n + 1 : size;
        if ((size_t)n + 1 > want)
            return (fs_fail(-ERANGE), NULL);
        if ((buf = malloc(want)) == NULL)
            return NULL;
    } else if (size == 0) {
        return (fs_fail(-EINVAL), NULL);
    } else if ((size_t)n + 1 > size) {
        return (fs_fail(-ERANGE), NULL);
    }
    memcpy(buf, path, (size_t)n + 1);
    return buf;
}

FS_EXPORT char *get_current_dir_name(void)
{
    char path[PATH_MAX];
    const fs_state *s = fs_state_get();
    if (s == NULL || fs_cwd_virtual(s, path, sizeof path) < 0)
        return CALL_REAL(NULL, get_current_dir_name);
    return strdup(path);
}

/* ---- extended attributes ----------------------------------------------------------------------- */

/* Existence check shared by the path forms: INSIDE when the entry exists, -errno otherwise; OUTSIDE when a
 * symlink led out (the caller forwards with k->buf). */
static fs_resolved xattr_entry(fs_path_class c, fs_key *k, int follow)
{
    const fs_state *s;
    const fs_table *t;
    uint32_t idx;
    return lookup(c, k, follow, &s, &t, &idx);
}

#define GETXATTR_DOOR(name, follow) \
    FS_EXPORT ssize_t name(const char *path, const char *attr, void *value, size_t size) \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return CALL_REAL(-1, name, path, attr, value, size); \
        fs_resolved rc = xattr_entry(c, &k, follow); \
        if (rc == FS_RESOLVED_OUTSIDE) \
            return CALL_REAL(-1, name, k.buf, attr, value, size); \
        return fs_fail(rc < 0 ? rc : -ENODATA); \
    }

GETXATTR_DOOR(getxattr, 1)
GETXATTR_DOOR(lgetxattr, 0)

#define LISTXATTR_DOOR(name, follow) \
    FS_EXPORT ssize_t name(const char *path, char *list, size_t size) \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return CALL_REAL(-1, name, path, list, size); \
        fs_resolved rc = xattr_entry(c, &k, follow); \
        if (rc == FS_RESOLVED_OUTSIDE) \
            return CALL_REAL(-1, name, k.buf, list, size); \
        return rc < 0 ? fs_fail(rc) : 0; \
    }

LISTXATTR_DOOR(listxattr, 1)
LISTXATTR_DOOR(llistxattr, 0)

#define SETXATTR_DOOR(name, follow) \
    FS_EXPORT int name(const char *path, const char *attr, const void *value, size_t size, int flags) \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return CALL_REAL(-1, name, path, attr, value, size, flags); \
        fs_resolved rc = xattr_entry(c, &k, follow); \
        if (rc == FS_RESOLVED_OUTSIDE) \
            return CALL_REAL(-1, name, k.buf, attr, value, size, flags); \
        return fs_fail(rc < 0 ? rc : -EROFS); \
    }

SETXATTR_DOOR(setxattr, 1)
SETXATTR_DOOR(lsetxattr, 0)

#define REMOVEXATTR_DOOR(name, follow) \
    FS_EXPORT int name(const char *path, const char *attr) \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return CALL_REAL(-1, name, path, attr); \
        fs_resolved rc = xattr_entry(c, &k, follow); \
        if (rc == FS_RESOLVED_OUTSIDE) \
            return CALL_REAL(-1, name, k.buf, attr); \
        return fs_fail(rc < 0 ? rc : -EROFS); \
    }

REMOVEXATTR_DOOR(removexattr, 1)
REMOVEXATTR_DOOR(lremovexattr, 0)

static int fd_is_ours(int fd)
{
    fs_fd_info info;
    return fs_fd_get(fd, &info) != FS_FD_NONE && fs_ns_fd(fd, &info, NULL) != FS_FD_NONE;
}

FS_EXPORT ssize_t fgetxattr(int fd, const char *attr, void *value, size_t size)
{
    if (!fd_is_ours(fd))
        return CALL_REAL(-1, fgetxattr, fd, attr, value, size);
    return fs_fail(-ENODATA);
}

FS_EXPORT ssize_t flistxattr(int fd, char *list, size_t size)
{
    if (!fd_is_ours(fd))
        return CALL_REAL(-1, flistxattr, fd, list, size);
    return 0;
}

FS_EXPORT int fsetxattr(int fd, const char *attr, const void *value, size_t size, int flags)
{
    if (!fd_is_ours(fd))
        return CALL_REAL(-1, fsetxattr, fd, attr, value, size, flags);
    return fs_fail(-EROFS);
}

FS_EXPORT int fremovexattr(int fd, const char *attr)
{
    if (!fd_is_ours(fd))
        return CALL_REAL(-1, fremovexattr, fd, attr);
    return fs_fail(-EROFS);
}

/* ---- file-system statistics -------------------------------------------------------------------- */

#define STATFS_DOOR(name, type, fill) \
    FS_EXPORT int name(const char *path, type *buf) \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return CALL_REAL(-1, name, path, buf); \
        const fs_state *s; \
        const fs_table *t; \
        uint32_t idx; \
        fs_resolved rc = lookup(c, &k, 1, &s, &t, &idx); \
        if (rc == FS_RESOLVED_OUTSIDE) \
            return CALL_REAL(-1, name, k.buf, buf); \
        if (rc < 0) \
            return fs_fail(rc); \
        fill(t, (void *)buf); \
        return 0; \
    }

#define FSTATFS_DOOR(name, type, fill) \
    FS_EXPORT int name(int fd, type *buf) \
    { \
        const fs_table *t; \
        if (!fd_is_ours(fd) || (t = fs_state_table()) == NULL) \
            return CALL_REAL(-1, name, fd, buf); \
        fill(t, (void *)buf); \
        return 0; \
    }

_Static_assert(sizeof(struct statfs) == sizeof(struct statfs64), "statfs and statfs64 share one layout here");
_Static_assert(sizeof(struct statvfs) == sizeof(struct statvfs64), "statvfs and statvfs64 share one layout here");

STATFS_DOOR(statfs, struct statfs, fs_ns_statfs)
STATFS_DOOR(statfs64, struct statfs64, fs_ns_statfs)
STATFS_DOOR(statvfs, struct statvfs, fs_ns_statvfs)
STATFS_DOOR(statvfs64, struct statvfs64, fs_ns_statvfs)
FSTATFS_DOOR(fstatfs, struct statfs, fs_ns_statfs)
FSTATFS_DOOR(fstatfs64, struct statfs64, fs_ns_statfs)
FSTATFS_DOOR(fstatvfs, struct statvfs, fs_ns_statvfs)
FSTATFS_DOOR(fstatvfs64, struct statvfs64, fs_ns_statvfs)
