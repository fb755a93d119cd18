/* wrap_read: the calls that read a descriptor by position, kept inside a slice's window (docs/slices.md): read,
 * pread, readv, preadv (+ 64, v2 and fortified forms), lseek, posix_fadvise, readahead.
 * The kernel file offset is the position (base + logical position), so descriptors that share it (dup, fork)
 * share it, as POSIX says. A read takes the position, reads with pread inside the window and moves the offset:
 * bytes outside the window are never returned, even to threads racing on one descriptor (they may read the same
 * bytes twice, where the kernel would have serialised them). Every other descriptor goes straight to libc after
 * one table lookup (a relaxed load in a process that never opened a slice). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fd_table.h"
#include "real_libc.h"
#include "shim_state.h"

extern void __chk_fail(void) __attribute__((noreturn));

/* Bytes of the window left from pos, at most want. */
static size_t clamp(const fs_fd_info *w, uint64_t pos, size_t want)
{
    if (pos >= w->len)
        return 0;
    uint64_t left = w->len - pos;
    return left < want ? (size_t)left : want;
}

/* The logical position, or -1 (errno set). A kernel offset below the window (moved by a raw system call) reads as
 * the window's start. */
static int64_t position(int fd, const fs_fd_info *w)
{
    off_t cur = CALL_REAL(-1, lseek, fd, 0, SEEK_CUR);
    if (cur < 0)
        return -1;
    return (uint64_t)cur > w->base ? (int64_t)((uint64_t)cur - w->base) : 0;
}

static ssize_t window_read(int fd, const fs_fd_info *w, void *buf, size_t n)
{
    int64_t pos = position(fd, w);
    if (pos < 0)
        return -1;
    size_t want = clamp(w, (uint64_t)pos, n);
    if (want == 0)
        return 0;
    ssize_t r = CALL_REAL(-1, pread, fd, buf, want, (off_t)(w->base + (uint64_t)pos));
    if (r > 0 && CALL_REAL(-1, lseek, fd, (off_t)(w->base + (uint64_t)pos + (uint64_t)r), SEEK_SET) < 0)
        return -1;
    return r;
}

static ssize_t window_pread(int fd, const fs_fd_info *w, void *buf, size_t n, int64_t off)
{
    if (off < 0)
        return fs_fail(-EINVAL);
    size_t want = clamp(w, (uint64_t)off, n);
    return want == 0 ? 0 : CALL_REAL(-1, pread, fd, buf, want, (off_t)(w->base + (uint64_t)off));
}

/* preadv at logical offset off (-1: the position, moved after) of at most the window's remaining bytes. */
static ssize_t window_preadv(int fd, const fs_fd_info *w, const struct iovec *iov, int count, int64_t off, int flags)
{
    if (count < 0 || count > IOV_MAX)
        return fs_fail(-EINVAL);
    int at_position = off == -1;
    if (at_position && (off = position(fd, w)) < 0)
        return -1;
    if (off < 0)
        return fs_fail(-EINVAL);
    size_t total = 0;
    for (int i = 0; i < count; i++)
        total += iov[i].iov_len;
    size_t want = clamp(w, (uint64_t)off, total);
    if (want == 0)
        return 0;
    struct iovec cut[IOV_MAX];
    int n = 0;
    for (size_t left = want; n < count && left > 0; n++) {
        cut[n] = iov[n];
        if (cut[n].iov_len > left)
            cut[n].iov_len = left;
        left -= cut[n].iov_len;
    }
    ssize_t r = CALL_REAL(-1, preadv2, fd, cut, n, (off_t)(w->base + (uint64_t)off), flags);
    if (r > 0 && at_position &&
        CALL_REAL(-1, lseek, fd, (off_t)(w->base + (uint64_t)off + (uint64_t)r), SEEK_SET) < 0)
        return -1;
    return r;
}

static off_t window_lseek(int fd, const fs_fd_info *w, off_t off, int whence)
{
    int64_t from;
    switch (whence) {
    case SEEK_SET: from = 0; break;
    case SEEK_CUR: if ((from = position(fd, w)) < 0) return -1; break;
    case SEEK_END: from = (int64_t)w->len; break;
    case SEEK_DATA:
    case SEEK_HOLE:
        /* No holes in a window: data runs from 0 to its end, then the one (virtual) hole. */
        if (off < 0 || (uint64_t)off >= w->len)
            return fs_fail(-ENXIO);
        from = 0;
        off = whence == SEEK_HOLE ? (off_t)w->len : off;
        break;
    default: return fs_fail(-EINVAL);
    }
    if ((off > 0 && from > INT64_MAX - off) || from + off < 0)
        return fs_fail(off > 0 ? -EOVERFLOW : -EINVAL);
    uint64_t pos = (uint64_t)(from + off);
    if (pos > (uint64_t)INT64_MAX - w->base)
        return fs_fail(-EOVERFLOW);
    return CALL_REAL(-1, lseek, fd, (off_t)(w->base + pos), SEEK_SET) < 0 ? -1 : (off_t)pos;
}

FS_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    fs_fd_info w;
    return fs_fd_get_slice(fd, &w) ? window_read(fd, &w, buf, n) : CALL_REAL(-1, read, fd, buf, n);
}

FS_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    if (n > buflen)
        __chk_fail();
    return read(fd, buf, n);
}

#define PREAD_DOOR(name, off_type) \
    FS_EXPORT ssize_t name(int fd, void *buf, size_t n, off_type off) \
    { \
        fs_fd_info w; \
        return fs_fd_get_slice(fd, &w) ? window_pread(fd, &w, buf, n, off) : CALL_REAL(-1, name, fd, buf, n, off); \
    }

PREAD_DOOR(pread, off_t)
PREAD_DOOR(pread64, off64_t)

FS_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
    if (n > buflen)
        __chk_fail();
    return pread(fd, buf, n, off);
}

FS_EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen)
{
    if (n > buflen)
        __chk_fail();
    return pread64(fd, buf, n, off);
}

FS_EXPORT ssize_t readv(int fd, const struct iovec *iov, int count)
{
    fs_fd_info w;
    return fs_fd_get_slice(fd, &w) ? window_preadv(fd, &w, iov, count, -1, 0) : CALL_REAL(-1, readv, fd, iov, count);
}

#define PREADV_DOOR(name, off_type) \
    FS_EXPORT ssize_t name(int fd, const struct iovec *iov, int count, off_type off) \
    { \
        fs_fd_info w; \
        if (!fs_fd_get_slice(fd, &w)) \
            return CALL_REAL(-1, name, fd, iov, count, off); \
        return off < 0 ? fs_fail(-EINVAL) : window_preadv(fd, &w, iov, count, off, 0); \
    }

PREADV_DOOR(preadv, off_t)
PREADV_DOOR(preadv64, off64_t)

#define PREADV2_DOOR(name, off_type) \
    FS_EXPORT ssize_t name(int fd, const struct iovec *iov, int count, off_type off, int flags) \
    { \
        fs_fd_info w; \
        if (!fs_fd_get_slice(fd, &w)) \
            return CALL_REAL(-1, name, fd, iov, count, off, flags); \
        return off < -1 ? fs_fail(-EINVAL) : window_preadv(fd, &w, iov, count, off, flags); \
    }

PREADV2_DOOR(preadv2, off_t)
PREADV2_DOOR(preadv64v2, off64_t)

#define LSEEK_DOOR(name, off_type) \
    FS_EXPORT off_type name(int fd, off_type off, int whence) \
    { \
        fs_fd_info w; \
        return fs_fd_get_slice(fd, &w) ? window_lseek(fd, &w, off, whence) : CALL_REAL(-1, name, fd, off, whence); \
    }

LSEEK_DOOR(lseek, off_t)
LSEEK_DOOR(lseek64, off64_t)

/* Advice and readahead for [off, off + len) of the window (len 0: to its end), so they never reach the next file. */
#define FADVISE_DOOR(name, off_type) \
    FS_EXPORT int name(int fd, off_type off, off_type len, int advice) \
    { \
        fs_fd_info w; \
        if (!fs_fd_get_slice(fd, &w)) \
            return CALL_REAL(ENOSYS, name, fd, off, len, advice); \
        if (off < 0 || len < 0) \
            return EINVAL; \
        size_t n = clamp(&w, (uint64_t)off, len == 0 ? SIZE_MAX : (size_t)len); \
        return n == 0 ? 0 : CALL_REAL(ENOSYS, name, fd, (off_type)(w.base + (uint64_t)off), (off_type)n, advice); \
    }

FADVISE_DOOR(posix_fadvise, off_t)
FADVISE_DOOR(posix_fadvise64, off64_t)

FS_EXPORT ssize_t readahead(int fd, off64_t off, size_t count)
{
    fs_fd_info w;
    if (!fs_fd_get_slice(fd, &w))
        return CALL_REAL(-1, readahead, fd, off, count);
    if (off < 0)
        return fs_fail(-EINVAL);
    size_t n = clamp(&w, (uint64_t)off, count);
    return n == 0 ? 0 : CALL_REAL(-1, readahead, fd, (off64_t)(w.base + (uint64_t)off), n);
}
