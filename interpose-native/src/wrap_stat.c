/* wrap_stat: the stat family (modern, 64, at, statx, legacy __xstat*) and access.
 * Three rooms: stat_key() for an inside path, fstat_fd() for one of our descriptors (answers from the
 * table so fstat agrees with stat(path); a stale descriptor slot falls back to the kernel's answer), and
 * statx_*() for the statx picture. The mount root ("" key) is a directory even when /fanstore does not
 * exist on disk, which Python's realpath (lstat of each component) needs.
 * Errors chosen: table missing -> EIO; access(W_OK) on an existing entry -> EROFS. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "namespace.h"
#include "real_libc.h"

static int stat_key(fs_path_class c, fs_key *k, struct stat *st, int follow)
{
    if (c < 0)
        return fs_fail(c);
    const fs_state *s = fs_state_get();
    const fs_table *t = fs_state_table();
    if (s == NULL || t == NULL)
        return fs_fail(-EIO);
    uint32_t idx;
    fs_resolved rc = fs_ns_resolve(s, t, k, follow, &idx);
    if (rc == FS_RESOLVED_OUTSIDE)
        return CALL_REAL(-1, fstatat, AT_FDCWD, k->buf, st, follow ? 0 : AT_SYMLINK_NOFOLLOW);
    if (rc < 0)
        return fs_fail(rc);
    fs_ns_stat(t, idx, st);
    return 0;
}

/* fd is (or was) ours: the kernel's fstat decides whether the slot still describes it. */
static int fstat_fd(int fd, struct stat *st)
{
    struct stat real;
    if (CALL_REAL(-1, fstat, fd, &real) != 0)
        return -1;
    fs_fd_info info;
    const fs_table *t = fs_state_table();
    if (fs_fd_get(fd, &info) == FS_FD_NONE || (uint64_t)real.st_dev != info.dev ||
        (uint64_t)real.st_ino != info.ino || t == NULL || fs_ns_mode(t, info.index) == 0) {
        if (!fs_state_in_vfork_child())
            fs_fd_clear(fd);
        *st = real;
        return 0;
    }
    fs_ns_stat(t, info.index, st);
    return 0;
}

static int is_ours(int fd)
{
    fs_fd_info info;
    return fs_fd_get(fd, &info) != FS_FD_NONE;
}

/* fstatat semantics shared by fstatat/fstatat64/__fxstatat*: "" with AT_EMPTY_PATH means dirfd itself. */
static int fstatat_any(fs_path_class c, fs_key *k, int dirfd, struct stat *st, int flags)
{
    (void)dirfd;
    return stat_key(c, k, st, !(flags & AT_SYMLINK_NOFOLLOW));
}

#define PATH_STAT_DOOR(name, type, follow) \
    FS_EXPORT int name(const char *path, type *st) \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return CALL_REAL(-1, name, path, st); \
        return stat_key(c, &k, (struct stat *)st, follow); \
    }

PATH_STAT_DOOR(stat, struct stat, 1)
PATH_STAT_DOOR(stat64, struct stat64, 1)
PATH_STAT_DOOR(lstat, struct stat, 0)
PATH_STAT_DOOR(lstat64, struct stat64, 0)

#define FD_STAT_DOOR(name, type) \
    FS_EXPORT int name(int fd, type *st) \
    { \
        if (!is_ours(fd)) \
            return CALL_REAL(-1, name, fd, st); \
        return fstat_fd(fd, (struct stat *)st); \
    }

FD_STAT_DOOR(fstat, struct stat)
FD_STAT_DOOR(fstat64, struct stat64)

#define AT_STAT_DOOR(name, type) \
    FS_EXPORT int name(int dirfd, const char *path, type *st, int flags) \
    { \
        if ((flags & AT_EMPTY_PATH) && fs_ns_empty_path(path)) { \
            if (!is_ours(dirfd)) \
                return CALL_REAL(-1, name, dirfd, path, st, flags); \
            return fstat_fd(dirfd, (struct stat *)st); \
        } \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), dirfd, &path, &k); \
        if (c == FS_PATH_OUTSIDE) { \
            int r = CALL_REAL(-1, name, dirfd, path, st, flags); \
            if (r == 0 || !fs_ns_retry_lookup(fs_state_get(), dirfd, path, &k)) \
                return r; \
            c = FS_PATH_INSIDE; \
        } \
        return fstatat_any(c, &k, dirfd, (struct stat *)st, flags); \
    }

AT_STAT_DOOR(fstatat, struct stat)
AT_STAT_DOOR(fstatat64, struct stat64)

/* Legacy entry points of binaries built against glibc < 2.33; `ver` is _STAT_VER (the kernel layout). */
#define XSTAT_DOOR(name, type, follow) \
    FS_EXPORT int name(int ver, const char *path, type *st) \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return CALL_REAL(-1, name, ver, path, st); \
        return stat_key(c, &k, (struct stat *)st, follow); \
    }

XSTAT_DOOR(__xstat, struct stat, 1)
XSTAT_DOOR(__xstat64, struct stat64, 1)
XSTAT_DOOR(__lxstat, struct stat, 0)
XSTAT_DOOR(__lxstat64, struct stat64, 0)

#define FXSTAT_DOOR(name, type) \
    FS_EXPORT int name(int ver, int fd, type *st) \
    { \
        if (!is_ours(fd)) \
            return CALL_REAL(-1, name, ver, fd, st); \
        return fstat_fd(fd, (struct stat *)st); \
    }

FXSTAT_DOOR(__fxstat, struct stat)
FXSTAT_DOOR(__fxstat64, struct stat64)

#define FXSTATAT_DOOR(name, type) \
    FS_EXPORT int name(int ver, int dirfd, const char *path, type *st, int flags) \
    { \
        if ((flags & AT_EMPTY_PATH) && fs_ns_empty_path(path)) { \
            if (!is_ours(dirfd)) \
                return CALL_REAL(-1, name, ver, dirfd, path, st, flags); \
            return fstat_fd(dirfd, (struct stat *)st); \
        } \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), dirfd, &path, &k); \
        if (c == FS_PATH_OUTSIDE) { \
            int r = CALL_REAL(-1, name, ver, dirfd, path, st, flags); \
            if (r == 0 || !fs_ns_retry_lookup(fs_state_get(), dirfd, path, &k)) \
                return r; \
            c = FS_PATH_INSIDE; \
        } \
        return fstatat_any(c, &k, dirfd, (struct stat *)st, flags); \
    }

FXSTATAT_DOOR(__fxstatat, struct stat)
FXSTATAT_DOOR(__fxstatat64, struct stat64)

/* statx: the same answers in the statx picture. */
static int statx_fd(int fd, int flags, unsigned mask, struct statx *stx)
{
    struct stat st;
    fs_fd_info info;
    const fs_table *t = fs_state_table();
    if (fs_ns_fd(fd, &info, &st) == FS_FD_NONE || t == NULL || fs_ns_mode(t, info.index) == 0)
        return CALL_REAL(-1, statx, fd, "", flags, mask, stx);
    fs_ns_statx(t, info.index, stx);
    return 0;
}

static int statx_key(fs_path_class c, fs_key *k, int flags, unsigned mask, struct statx *stx)
{
    if (c < 0)
        return fs_fail(c);
    const fs_state *s = fs_state_get();
    const fs_table *t = fs_state_table();
    if (s == NULL || t == NULL)
        return fs_fail(-EIO);
    uint32_t idx;
    fs_resolved rc = fs_ns_resolve(s, t, k, !(flags & AT_SYMLINK_NOFOLLOW), &idx);
    if (rc == FS_RESOLVED_OUTSIDE)
        return CALL_REAL(-1, statx, AT_FDCWD, k->buf, flags, mask, stx);
    if (rc < 0)
        return fs_fail(rc);
    fs_ns_statx(t, idx, stx);
    return 0;
}

FS_EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *stx)
{
    if ((flags & AT_EMPTY_PATH) && fs_ns_empty_path(path)) {
        if (!is_ours(dirfd))
            return CALL_REAL(-1, statx, dirfd, path, flags, mask, stx);
        return statx_fd(dirfd, flags, mask, stx);
    }
    fs_key k;
    fs_path_class c = fs_ns_classify(fs_state_get(), dirfd, &path, &k);
    if (c == FS_PATH_OUTSIDE) {
        int r = CALL_REAL(-1, statx, dirfd, path, flags, mask, stx);
        if (r == 0 || !fs_ns_retry_lookup(fs_state_get(), dirfd, path, &k))
            return r;
        c = FS_PATH_INSIDE;
    }
    return statx_key(c, &k, flags, mask, stx);
}

/* access family: existence from the table, permission from the entry's mode, W_OK -> EROFS. */
static int access_key(fs_path_class c, fs_key *k, int mode, int flags)
{
    if (c < 0)
        return fs_fail(c);
    const fs_state *s = fs_state_get();
    const fs_table *t = fs_state_table();
    if (s == NULL || t == NULL)
        return fs_fail(-EIO);
    uint32_t idx;
    fs_resolved rc = fs_ns_resolve(s, t, k, !(flags & AT_SYMLINK_NOFOLLOW), &idx);
    if (rc == FS_RESOLVED_OUTSIDE)
        return CALL_REAL(-1, faccessat, AT_FDCWD, k->buf, mode, flags);
    if (rc < 0)
        return fs_fail(rc);
    int err = fs_ns_access(t, idx, mode, flags & AT_EACCESS);
    return err < 0 ? fs_fail(err) : 0;
}

#define ACCESS_DOOR(name, flags) \
    FS_EXPORT int name(const char *path, int mode) \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return CALL_REAL(-1, name, path, mode); \
        return access_key(c, &k, mode, flags); \
    }

ACCESS_DOOR(access, 0)
ACCESS_DOOR(euidaccess, AT_EACCESS)
ACCESS_DOOR(eaccess, AT_EACCESS)

FS_EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
    fs_key k;
    fs_path_class c = fs_ns_classify(fs_state_get(), dirfd, &path, &k);
    if (c == FS_PATH_OUTSIDE) {
        int r = CALL_REAL(-1, faccessat, dirfd, path, mode, flags);
        if (r == 0 || !fs_ns_retry_lookup(fs_state_get(), dirfd, path, &k))
            return r;
        c = FS_PATH_INSIDE;
    }
    return access_key(c, &k, mode, flags);
}
