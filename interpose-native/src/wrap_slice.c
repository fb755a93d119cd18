/* wrap_slice: the other calls that could see past a slice's window (docs/slices.md).
 *   - sendfile, copy_file_range, splice with a slice as the source: windowed like pread (the offset pointer, or the
 *     position when it is NULL, is logical; the count is cut at the window's end).
 *   - mmap of a slice, and fdopen (stdio reads with glibc's internal read, out of the shim's reach): the slice is
 *     first made an ordinary descriptor in place (fs_slice_materialise), then the call proceeds natively. A slice
 *     that cannot be materialised fails the call with that error (EIO, ENOSPC), never maps the partition. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "fd_table.h"
#include "real_libc.h"
#include "shim_state.h"
#include "slice_fd.h"

/* Logical start for a call that takes an offset pointer (NULL: the descriptor's position, moved after). */
static int64_t start_of(int fd, const fs_fd_info *w, const int64_t *off)
{
    if (off != NULL)
        return *off < 0 ? fs_fail(-EINVAL) : *off;
    off_t cur = CALL_REAL(-1, lseek, fd, 0, SEEK_CUR);
    if (cur < 0)
        return -1;
    return (uint64_t)cur > w->base ? (int64_t)((uint64_t)cur - w->base) : 0;
}

/* After r bytes went from logical start: the caller's offset, or the descriptor's position, moves on. */
static ssize_t moved(int fd, const fs_fd_info *w, int64_t *off, int64_t start, ssize_t r)
{
    if (r <= 0)
        return r;
    if (off != NULL)
        *off = start + r;
    else if (CALL_REAL(-1, lseek, fd, (off_t)(w->base + (uint64_t)start + (uint64_t)r), SEEK_SET) < 0)
        return -1;
    return r;
}

static size_t left_in(const fs_fd_info *w, int64_t start, size_t count)
{
    if ((uint64_t)start >= w->len)
        return 0;
    return w->len - (uint64_t)start < count ? (size_t)(w->len - (uint64_t)start) : count;
}

#define SENDFILE_DOOR(name, off_type) \
    FS_EXPORT ssize_t name(int out, int in, off_type *off, size_t count) \
    { \
        fs_fd_info w; \
        if (!fs_fd_get_slice(in, &w)) \
            return CALL_REAL(-1, name, out, in, off, count); \
        int64_t start = start_of(in, &w, (int64_t *)off); \
        if (start < 0) \
            return -1; \
        size_t n = left_in(&w, start, count); \
        off_type at = (off_type)(w.base + (uint64_t)start); \
        return n == 0 ? 0 : moved(in, &w, (int64_t *)off, start, CALL_REAL(-1, name, out, in, &at, n)); \
    }

SENDFILE_DOOR(sendfile, off_t)
SENDFILE_DOOR(sendfile64, off64_t)

/* copy_file_range and splice: same shape, (in, in offset, out, out offset, count, flags). */
#define RANGE_DOOR(name) \
    FS_EXPORT ssize_t name(int in, off64_t *in_off, int out, off64_t *out_off, size_t count, unsigned flags) \
    { \
        fs_fd_info w; \
        if (!fs_fd_get_slice(in, &w)) \
            return CALL_REAL(-1, name, in, in_off, out, out_off, count, flags); \
        int64_t start = start_of(in, &w, in_off); \
        if (start < 0) \
            return -1; \
        size_t n = left_in(&w, start, count); \
        off64_t at = (off64_t)(w.base + (uint64_t)start); \
        return n == 0 ? 0 : moved(in, &w, in_off, start, CALL_REAL(-1, name, in, &at, out, out_off, n, flags)); \
    }

RANGE_DOOR(copy_file_range)
RANGE_DOOR(splice)

#define MMAP_DOOR(name, off_type) \
    FS_EXPORT void *name(void *addr, size_t len, int prot, int flags, int fd, off_type off) \
    { \
        fs_fd_info w; \
        if (fd >= 0 && !(flags & MAP_ANONYMOUS) && fs_fd_get_slice(fd, &w)) { \
            int rc = fs_slice_materialise(fd); \
            if (rc < 0) \
                return (fs_fail(rc), MAP_FAILED); \
        } \
        return CALL_REAL(MAP_FAILED, name, addr, len, prot, flags, fd, off); \
    }

MMAP_DOOR(mmap, off_t)
MMAP_DOOR(mmap64, off64_t)

FS_EXPORT FILE *fdopen(int fd, const char *mode)
{
    fs_fd_info w;
    if (fs_fd_get_slice(fd, &w)) {
        int rc = fs_slice_materialise(fd);
        if (rc < 0)
            return (fs_fail(rc), NULL);
    }
    return CALL_REAL(NULL, fdopen, fd, mode);
}
