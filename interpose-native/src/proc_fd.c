/* proc_fd: see proc_fd.h. Only absolute names are recognised; a relative "N" opened through a descriptor
 * of /proc/self/fd (openat) is not, nor is any process that runs without the shim: the backing files are
 * also made read-only (0444) by the runtime, which stops every user but root. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "namespace.h"
#include "proc_fd.h"

/* The descriptor number after prefix in path, or -1 when path is not prefix + digits (+ slashes). */
static int fd_after(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(path, prefix, n) != 0)
        return -1;
    const char *p = path + n;
    long fd = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        fd = fd * 10 + (*p - '0');
        if (fd > (long)FS_FD_MAX)
            return -1;
    }
    while (*p == '/')
        p++;
    return *p == '\0' ? (int)fd : -1;
}

static int named_fd(const char *path)
{
    if (path == NULL)
        return -1;
    if (strncmp(path, "/dev/fd/", 8) == 0)
        return fd_after(path, "/dev/fd/");
    if (strncmp(path, "/proc/", 6) != 0)
        return -1;
    int fd = fd_after(path, "/proc/self/fd/");
    if (fd < 0)
        fd = fd_after(path, "/proc/thread-self/fd/");
    if (fd < 0) {
        char mine[48];
        snprintf(mine, sizeof mine, "/proc/%ld/fd/", (long)getpid());
        fd = fd_after(path, mine);
    }
    return fd;
}

int fs_proc_fd_is_ours(const char *path)
{
    int fd = named_fd(path);
    fs_fd_info info;
    return fd >= 0 && fs_ns_fd(fd, &info, NULL) == FS_FD_FILE;
}

int fs_proc_fd_slice(const char *path, uint32_t *index)
{
    int fd = named_fd(path);
    fs_fd_info info;
    if (fd < 0 || fs_ns_fd(fd, &info, NULL) != FS_FD_FILE || !info.slice)
        return 0;
    *index = info.index;
    return 1;
}

int fs_proc_fd_refuse_write(const char *path, int flags)
{
    int writes = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
    return writes && fs_proc_fd_is_ours(path) ? -EROFS : 0;
}
