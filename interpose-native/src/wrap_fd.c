/* wrap_fd: keeps fd_table in step with the kernel's descriptor table: close, dup, dup2, dup3,
 * fcntl(F_DUPFD, F_DUPFD_CLOEXEC), close_range.
 * Order: a slot is cleared before the real close (a concurrent open may reuse the number the moment the
 * kernel frees it, and its registration must not be wiped), and set after a real dup succeeds (the new
 * number is ours from then on).
 * vfork: a vfork child (Python's subprocess calls close_range, dup2 before exec) has its own descriptor
 * table but shares our memory with its parent; its closes must not touch fd_table, so every mutation is
 * skipped there. The check (a getpid) is paid only when a slot is actually ours.
 * Output descriptors (writing a file of the upper tree, upper.h): each close (or dup2 over one, or fclose)
 * publishes the file under its current name; exit and _exit publish what is still open. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/close_range.h>

#include "fd_table.h"
#include "real_libc.h"
#include "shim_state.h"
#include "slice_fd.h"
#include "upper.h"

/* Forget fd before it is closed or replaced (never in a vfork child). */
static void forget(int fd)
{
    fs_fd_info info;
    if ((fs_fd_get(fd, &info) != FS_FD_NONE || fs_fd_get_output(fd, &info) != FS_FD_NONE) &&
        !fs_state_in_vfork_child())
        fs_fd_clear(fd);
}

/* newfd is a copy of fd: it inherits fd's slot, or loses any stale slot it had. */
static void copied(int fd, int newfd)
{
    fs_fd_info info;
    if (fs_state_in_vfork_child()) {
        fs_slice_vfork_copied(fd, newfd);   /* the exec that follows must know which of its descriptors are slices */
        return;
    }
    if (fs_fd_get(fd, &info) != FS_FD_NONE || fs_fd_get(newfd, &info) != FS_FD_NONE ||
        fs_fd_get_output(fd, &info) != FS_FD_NONE || fs_fd_get_output(newfd, &info) != FS_FD_NONE) {
        if (fs_state_in_vfork_child())
            return;
        fs_fd_copy(fd, newfd);
    }
}

/* The descriptor is closed whatever the publish answered (as close(2) does after any error); a publish that
 * failed is then the close's error, so a writer that checks close learns its file was not kept. */
static int closed(int rc, int published)
{
    if (rc == 0 && published < 0) {
        errno = -published;
        return -1;
    }
    return rc;
}

FS_EXPORT int close(int fd)
{
    int published = fs_up_closing(fd);
    forget(fd);
    fs_state_void_lost_if(fd);
    return closed(CALL_REAL(-1, close, fd), published);
}

/* fclose flushes, then publishes the file under the name its descriptor has, then closes with glibc's
 * internal close; a failed publish is fclose's error (EOF). */
FS_EXPORT int fclose(FILE *stream)
{
    int fd = stream != NULL ? fileno(stream) : -1;
    fs_fd_info info;
    if (fd < 0 || fs_fd_get_output(fd, &info) == FS_FD_NONE)
        return CALL_REAL(EOF, fclose, stream);
    int published = fflush(stream) == 0 ? fs_up_closing(fd) : 0;
    return closed(CALL_REAL(EOF, fclose, stream), published) < 0 ? EOF : 0;
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
    if (fd != newfd)
        (void)fs_up_closing(newfd);  /* dup2 over a descriptor that writes an output closes it */
    int rc = CALL_REAL(-1, dup2, fd, newfd);
    if (rc >= 0 && fd != newfd) {
        copied(fd, newfd);
        fs_state_void_lost_if(newfd);
    }
    return rc;
}

FS_EXPORT int dup3(int fd, int newfd, int flags)
{
    if (fd != newfd)
        (void)fs_up_closing(newfd);
    int rc = CALL_REAL(-1, dup3, fd, newfd, flags);
    if (rc >= 0) {
        copied(fd, newfd);
        fs_state_void_lost_if(newfd);
    }
    return rc;
}

FS_EXPORT void _exit(int status)
{
    if (!fs_state_in_vfork_child())
        fs_up_exit();
    fs_real__exit_fn real = REAL(_exit);
    if (real != NULL)
        real(status);
    for (;;)
        syscall(SYS_exit_group, status);
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

static void closed_in_range(int fd)
{
    (void)fs_up_closing(fd);  /* close_range reports no error of one descriptor */
}

FS_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    /* Clear first (see top); only when the call can succeed and really closes. */
    if (first <= last && !(flags & ~(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)) &&
        !(flags & CLOSE_RANGE_CLOEXEC) && !fs_state_in_vfork_child()) {
        fs_fd_clear_range(first, last, closed_in_range);
        fs_state_void_lost_range(first, last);
    }
    return CALL_REAL(-1, close_range, first, last, flags);
}
