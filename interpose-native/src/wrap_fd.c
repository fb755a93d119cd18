/* wrap_fd: keeps fd_table in step with the kernel's descriptor table: close, dup, dup2, dup3,
 * fcntl(F_DUPFD, F_DUPFD_CLOEXEC), close_range.
 * Order: a slot is cleared before the real close (a concurrent open may reuse the number the moment the
 * kernel frees it, and its registration must not be wiped), and set after a real dup succeeds (the new
 * number is ours from then on).
 * vfork: a vfork child (Python's subprocess calls close_range, dup2 before exec) has its own descriptor
 * table but shares our memory with its parent; its closes must not touch fd_table, so every mutation is
 * skipped there. The check (a getpid) is paid only when a slot is actually ours. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>
#include <linux/close_range.h>

#include "fd_table.h"
#include "real_libc.h"
#include "shim_state.h"

/* Forget fd before it is closed or replaced (never in a vfork child). */
static void forget(int fd)
{
    fs_fd_info info;
    if (fs_fd_get(fd, &info) != FS_FD_NONE && !fs_state_in_vfork_child())
        fs_fd_clear(fd);
}

/* newfd is a copy of fd: it inherits fd's slot, or loses any stale slot it had. */
static void copied(int fd, int newfd)
{
    fs_fd_info info;
    if (fs_fd_get(fd, &info) != FS_FD_NONE || fs_fd_get(newfd, &info) != FS_FD_NONE) {
        if (!fs_state_in_vfork_child())
            fs_fd_copy(fd, newfd);
    }
}

FS_EXPORT int close(int fd)
{
    forget(fd);
    fs_state_void_lost_if(fd);
    return CALL_REAL(-1, close, fd);
}

FS_EXPORT int dup(int fd)
{
    int newfd = CALL_REAL(-1, dup, fd);
    if (newfd >= 0)
        copied(fd, newfd);
    return newfd;
}

FS_EXPORT int dup2(int fd, int newfd)
{
    int rc = CALL_REAL(-1, dup2, fd, newfd);
    if (rc >= 0 && fd != newfd) {
        copied(fd, newfd);
        fs_state_void_lost_if(newfd);
    }
    return rc;
}

FS_EXPORT int dup3(int fd, int newfd, int flags)
{
    int rc = CALL_REAL(-1, dup3, fd, newfd, flags);
    if (rc >= 0) {
        copied(fd, newfd);
        fs_state_void_lost_if(newfd);
    }
    return rc;
}

/* fcntl's third argument is an int or a pointer; both travel in one register, so it is forwarded as a
 * pointer-sized value whatever the command. */
#define FCNTL_DOOR(name) \
    FS_EXPORT int name(int fd, int cmd, ...) \
    { \
        va_list ap; \
        va_start(ap, cmd); \
        void *arg = va_arg(ap, void *); \
        va_end(ap); \
        int rc = CALL_REAL(-1, name, fd, cmd, arg); \
        if (rc >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)) \
            copied(fd, rc); \
        return rc; \
    }

FCNTL_DOOR(fcntl)
FCNTL_DOOR(fcntl64)

FS_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    /* Clear first (see top); only when the call can succeed and really closes. */
    if (first <= last && !(flags & ~(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)) &&
        !(flags & CLOSE_RANGE_CLOEXEC) && !fs_state_in_vfork_child()) {
        fs_fd_clear_range(first, last);
        fs_state_void_lost_range(first, last);
    }
    return CALL_REAL(-1, close_range, first, last, flags);
}
