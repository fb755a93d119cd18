/* wrap_exec: a new image has no shim state, so a slice it would inherit (no FD_CLOEXEC) would read as the whole
 * partition copy. Before execve and its family, every such slice becomes a private memory copy of its window on the
 * same descriptor number and position (fs_slice_to_memory: a memfd, reopened read-only); before posix_spawn,
 * system and popen every slice does, CLOEXEC or not, since a spawn's file actions may dup2 one onto 0-2 unseen.
 * A slice that cannot be copied fails the exec (EIO, ENOMEM): never wrong bytes in the new image.
 * vfork: a vfork child (Python's subprocess) dup2s a slice onto 0-2 and then execs; its dups cannot go into
 * fd_table (that is its parent's memory), so wrap_fd.c reports them here and they go into a small overlay owned
 * by the child's pid, which only that child reads. Only system calls are made on that path (memfd_create,
 * sendfile, open of /proc/self/fd, dup3): nothing that takes a lock or allocates. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd_table.h"
#include "real_libc.h"
#include "shim_state.h"
#include "slice_fd.h"

#define OVERLAY_MAX 64
static struct {
    pid_t pid;          /* the vfork child that wrote it; any other process ignores it */
    int count;
    int fd[OVERLAY_MAX];
    fs_fd_info info[OVERLAY_MAX];
} overlay;

static const fs_fd_info *overlay_find(int fd)
{
    if (overlay.pid != (pid_t)syscall(SYS_getpid))
        return NULL;
    for (int i = 0; i < overlay.count; i++)
        if (overlay.fd[i] == fd)
            return &overlay.info[i];
    return NULL;
}

void fs_slice_vfork_copied(int fd, int newfd)
{
    pid_t me = (pid_t)syscall(SYS_getpid);
    if (overlay.pid != me) {
        overlay.pid = me;
        overlay.count = 0;
    }
    fs_fd_info info = { 0 };
    const fs_fd_info *from = overlay_find(fd);
    if (from != NULL)
        info = *from;
    else if (!fs_fd_get_slice(fd, &info))
        info.slice = 0;
    for (int i = 0; i < overlay.count; i++)
        if (overlay.fd[i] == newfd) {
            overlay.info[i] = info;
            return;
        }
    if (overlay.count < OVERLAY_MAX) {
        overlay.fd[overlay.count] = newfd;
        overlay.info[overlay.count++] = info;
    }
}

int fs_slice_to_memory(int fd, unsigned long long base, unsigned long long len, unsigned index)
{
    off_t cur = (off_t)syscall(SYS_lseek, fd, 0, SEEK_CUR);
    int fdf = (int)syscall(SYS_fcntl, fd, F_GETFD);
    if (cur < 0 || fdf < 0)
        return -errno;
    int m = (int)syscall(SYS_memfd_create, "fanstore-slice", MFD_CLOEXEC);
    if (m < 0)
        return -errno;
    off_t src = (off_t)base;
    int err = 0;
    for (unsigned long long left = len; left > 0 && err == 0;) {
        long n = syscall(SYS_sendfile, m, fd, &src, left > (1u << 30) ? (1u << 30) : left);
        if (n > 0)
            left -= (unsigned long long)n;
        else
            err = n == 0 ? -EIO : -errno;
    }
    char proc[48];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", m);
    int ro = err ? -1 : (int)syscall(SYS_openat, AT_FDCWD, proc, O_RDONLY | O_CLOEXEC);
    if (err == 0 && ro < 0)
        err = -errno;
    syscall(SYS_close, m);
    if (err != 0)
        return err;
    off_t pos = (unsigned long long)cur > base ? (off_t)((unsigned long long)cur - base) : 0;
    if (syscall(SYS_lseek, ro, pos, SEEK_SET) < 0 ||
        syscall(SYS_dup3, ro, fd, (fdf & FD_CLOEXEC) ? O_CLOEXEC : 0) < 0) {
        err = -errno;
        syscall(SYS_close, ro);
        return err;
    }
    syscall(SYS_close, ro);
    struct stat st;
    if (!fs_state_in_vfork_child() && syscall(SYS_fstat, fd, &st) == 0)
        fs_fd_set(fd, FS_FD_FILE, index, st.st_dev, st.st_ino);   /* fstat keeps answering as stat(path) */
    return 0;
}

/* fd's slice (w) is copied when it is live (still the object it was registered with) and the image will inherit
 * it: every one for a spawn (all), only those without FD_CLOEXEC for an exec. */
static int copy_if_inherited(int fd, const fs_fd_info *w, int all)
{
    struct stat st;
    if (syscall(SYS_fstat, fd, &st) != 0 || (uint64_t)st.st_dev != w->dev || (uint64_t)st.st_ino != w->ino)
        return 0;
    long fdf = syscall(SYS_fcntl, fd, F_GETFD);
    if (fdf < 0 || (!all && (fdf & FD_CLOEXEC)))
        return 0;
    return fs_slice_to_memory(fd, w->base, w->len, w->index);
}

struct sweep { int all; int err; };

static void from_table(int fd, const fs_fd_info *w, void *arg)
{
    struct sweep *s = arg;
    if (s->err == 0 && overlay_find(fd) == NULL)   /* a vfork child's own dup over fd decides instead */
        s->err = copy_if_inherited(fd, w, s->all);
}

/* Returns 0, or the -errno that must fail the exec. */
static int before_image(int all)
{
    struct sweep s = { all, 0 };
    fs_fd_each_slice(from_table, &s);
    if (overlay.pid == (pid_t)syscall(SYS_getpid))
        for (int i = 0; i < overlay.count && s.err == 0; i++)
            if (overlay.info[i].slice)
                s.err = copy_if_inherited(overlay.fd[i], &overlay.info[i], all);
    return s.err;
}

#define PREPARE(all, fail) \
    do { int fs__rc = before_image(all); if (fs__rc < 0) { fs_fail(fs__rc); return (fail); } } while (0)

FS_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    PREPARE(0, -1);
    return CALL_REAL(-1, execve, path, argv, envp);
}

FS_EXPORT int execv(const char *path, char *const argv[])
{
    PREPARE(0, -1);
    return CALL_REAL(-1, execv, path, argv);
}

FS_EXPORT int execvp(const char *file, char *const argv[])
{
    PREPARE(0, -1);
    return CALL_REAL(-1, execvp, file, argv);
}

FS_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    PREPARE(0, -1);
    return CALL_REAL(-1, execvpe, file, argv, envp);
}

FS_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    PREPARE(0, -1);
    return CALL_REAL(-1, fexecve, fd, argv, envp);
}

/* execl, execlp, execle: glibc builds the vector and calls its internal execve, out of our reach; so do we, and
 * call the wrapped vector form. */
#define ARGS_MAX 4096
#define COLLECT(arg0, argv, ap) \
    const char *argv[ARGS_MAX + 1]; \
    int fs__n = 0; \
    argv[fs__n++] = (arg0); \
    while (argv[fs__n - 1] != NULL && fs__n <= ARGS_MAX) \
        argv[fs__n++] = va_arg(ap, const char *); \
    if (argv[fs__n - 1] != NULL) { va_end(ap); return fs_fail(-E2BIG); }

FS_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    COLLECT(arg, argv, ap)
    va_end(ap);
    return execv(path, (char *const *)argv);
}

FS_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    COLLECT(arg, argv, ap)
    va_end(ap);
    return execvp(file, (char *const *)argv);
}

FS_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    COLLECT(arg, argv, ap)
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, (char *const *)argv, envp);
}

/* posix_spawn reports errors as its return value, not errno. */
FS_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                          const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    int rc = before_image(1);
    return rc < 0 ? -rc : CALL_REAL(ENOSYS, posix_spawn, pid, path, actions, attr, argv, envp);
}

FS_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                           const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    int rc = before_image(1);
    return rc < 0 ? -rc : CALL_REAL(ENOSYS, posix_spawnp, pid, file, actions, attr, argv, envp);
}

FS_EXPORT int system(const char *command)
{
    PREPARE(0, -1);
    return CALL_REAL(-1, system, command);
}

FS_EXPORT FILE *popen(const char *command, const char *type)
{
    PREPARE(0, NULL);
    return CALL_REAL(NULL, popen, command, type);
}
