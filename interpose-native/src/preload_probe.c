/* preload_probe: the shim's proof that it was loaded. When FANSTORE_SHIM_PROBE names a file, the constructor
 * appends one line to it: "fanstore shim loaded: glibc <version>, pid <pid>". `fanstore run` starts /bin/true with
 * the command's LD_PRELOAD and this variable before it starts anything else, and refuses to run the command when
 * the line does not appear (ld.so only warns "cannot be preloaded ... ignored" and runs a program without the
 * mount; musl's loader does not even warn). Inside a container, whose loader the launcher cannot try, the same
 * check is one line of the job script (docs/user-guide.md, "Running inside a container").
 * Owns nothing else; raw system calls (nothing is wrapped or initialised yet), no allocation, no exit(). */
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((constructor)) static void prove_loaded(void)
{
    const char *path = getenv("FANSTORE_SHIM_PROBE");
    if (path == NULL || path[0] == '\0')
        return;
    char line[128];
    int n = snprintf(line, sizeof line, "fanstore shim loaded: glibc %s, pid %ld\n", gnu_get_libc_version(),
                     (long)syscall(SYS_getpid));
    if (n <= 0 || (size_t)n >= sizeof line)
        return;
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    long w = syscall(SYS_write, (int)fd, line, (size_t)n);
    (void)w;
    syscall(SYS_close, (int)fd);
}
