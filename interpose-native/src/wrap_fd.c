/* wrap_fd: keeps fd_table in step with the kernel's descriptor table: close, dup, dup2, dup3,
 * fcntl(F_DUPFD, F_DUPFD_CLOEXEC), close_range.
 * Order: a slot is cleared before the real close (a concurrent open may reuse the number the moment the
 * kernel frees it, and its registration must not be wiped), and set after a real dup succeeds (the new
 * number is ours from then on).
 * vfork: a vfork child (Python's subprocess calls close_range, dup2 before exec) has its own descriptor
 * table but shares our memory with its parent; its closes must not touch fd_table, so every mutation is
 * skipped there. The check (a getpid) is paid only when a slot is actually ours.
 * Output descriptors (files being written) are counted per handle in output_handles.c: a copy adds one, a close
 * (or a dup2 over it, or fclose) removes one, and the close that removes the last commits the file; its
 * error (EEXIST, ENOSPC, EIO) is close's. fork() reports the child as a holder; exit and _exit release. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/close_range.h>

#include "fd_table.h"
#include "output_handles.h"
#include "real_libc.h"
#include "shim_state.h"
#include "slice_fd.h"

/* fd is an output descriptor still naming the object it was registered with: its handle id in *id. */
static int live_output(int fd, uint32_t *id)
{
    fs_fd_info info;
    if (fs_fd_get_output(fd, &info) == FS_FD_NONE || fs_state_in_vfork_child())
        return 0;
    struct stat st;
    if (CALL_REAL(-1, fstat, fd, &st) != 0 || (uint64_t)st.st_dev != info.dev || (uint64_t)st.st_ino != info.ino) {
        fs_fd_clear(fd);   /* closed behind our back and the number reused: that copy was never counted back */
        return 0;
    }
    *id = info.index;
    return 1;
}

static int closed_output(int rc, uint32_t id)
{
    int err = fs_oh_closed(id);
    return rc == 0 && err < 0 ? fs_fail(err) : rc;
}

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
        if (fs_fd_get_output(newfd, &info) != FS_FD_NONE)
            fs_oh_opened(info.index);
    }
}

FS_EXPORT int close(int fd)
{
    uint32_t id;
    int out = live_output(fd, &id);
    forget(fd);
    fs_state_void_lost_if(fd);
    int rc = CALL_REAL(-1, close, fd);
    return out ? closed_output(rc, id) : rc;
}

FS_EXPORT int fclose(FILE *stream)
{
    uint32_t id;
    int fd = stream != NULL ? fileno(stream) : -1;
    int out = fd >= 0 && live_output(fd, &id);
    if (out)
        fs_fd_clear(fd);
    int rc = CALL_REAL(EOF, fclose, stream);
    if (out && closed_output(rc == 0 ? 0 : -1, id) != 0 && rc == 0)
        rc = EOF;
    return rc;
}

FS_EXPORT int dup(int fd)
{
    int newfd = CALL_REAL(-1, dup, fd);
    if (newfd >= 0)
        copied(fd, newfd);
    return newfd;
}

/* dup2/dup3 over an output descriptor close it: that copy counts down (after the real call succeeded). */
static int replaced(int rc, int had_output, uint32_t id)
{
    return had_output ? closed_output(rc >= 0 ? 0 : -1, id) == 0 ? rc : -1 : rc;
}

FS_EXPORT int dup2(int fd, int newfd)
{
    uint32_t id = 0;
    int had = fd != newfd && live_output(newfd, &id);
    if (had)
        fs_fd_clear(newfd);
    int rc = CALL_REAL(-1, dup2, fd, newfd);
    if (rc >= 0 && fd != newfd) {
        copied(fd, newfd);
        fs_state_void_lost_if(newfd);
    }
    return rc >= 0 ? replaced(rc, had, id) : rc;
}

FS_EXPORT int dup3(int fd, int newfd, int flags)
{
    uint32_t id = 0;
    int had = fd != newfd && live_output(newfd, &id);
    if (had)
        fs_fd_clear(newfd);
    int rc = CALL_REAL(-1, dup3, fd, newfd, flags);
    if (rc >= 0) {
        copied(fd, newfd);
        fs_state_void_lost_if(newfd);
    }
    return rc >= 0 ? replaced(rc, had, id) : rc;
}

FS_EXPORT pid_t fork(void)
{
    pid_t pid = CALL_REAL(-1, fork);
    if (pid > 0)
        fs_oh_forked(pid);
    return pid;
}

FS_EXPORT void _exit(int status)
{
    if (!fs_state_in_vfork_child())
        fs_oh_release_all();
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

static void closed_in_range(uint32_t id)
{
    fs_oh_closed(id);
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
