/* wrap_socket: AF_UNIX sockets named in the namespace. bind makes the socket in this node's upper tree (an input's
 * name -> EADDRINUSE, as for any existing path); connect reaches a socket this node made. A real path longer than
 * sun_path allows is reached through /proc/self/fd/N/<name> of its directory. Abstract names and every other
 * family pass through. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "namespace.h"
#include "real_libc.h"

typedef int (*sock_fn)(int, const struct sockaddr *, socklen_t);

/* Calls fn with the address rewritten to real path p (via its directory's descriptor when p is too long). */
static int call_with_path(sock_fn fn, int fd, const char *p)
{
    struct sockaddr_un un = { .sun_family = AF_UNIX };
    size_t n = strlen(p);
    if (n < sizeof un.sun_path) {
        memcpy(un.sun_path, p, n + 1);
        return fn(fd, (const struct sockaddr *)&un, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1));
    }
    const char *slash = strrchr(p, '/');
    char dir[PATH_MAX];
    size_t dl = (size_t)(slash - p);
    memcpy(dir, p, dl);
    dir[dl] = '\0';
    int dfd = CALL_REAL(-1, open, dl > 0 ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    int w = snprintf(un.sun_path, sizeof un.sun_path, "/proc/self/fd/%d/%s", dfd, slash + 1);
    int rc = w > 0 && (size_t)w < sizeof un.sun_path
           ? fn(fd, (const struct sockaddr *)&un, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)w + 1))
           : (errno = ENAMETOOLONG, -1);
    int saved = errno;
    CALL_REAL(-1, close, dfd);
    errno = saved;
    return rc;
}

/* The namespace path in addr, NUL-terminated into buf, or NULL when the call is not ours to change. */
static const char *unix_path(const struct sockaddr *addr, socklen_t len, char *buf)
{
    if (addr == NULL || addr->sa_family != AF_UNIX || len <= offsetof(struct sockaddr_un, sun_path))
        return NULL;
    const struct sockaddr_un *un = (const struct sockaddr_un *)addr;
    size_t n = len - offsetof(struct sockaddr_un, sun_path);
    if (n > sizeof un->sun_path)
        n = sizeof un->sun_path;
    if (un->sun_path[0] == '\0')
        return NULL;       /* abstract */
    memcpy(buf, un->sun_path, n);
    buf[n] = '\0';
    return buf;
}

static int sock_call(sock_fn fn, int create, int fd, const struct sockaddr *addr, socklen_t len)
{
    char buf[sizeof ((struct sockaddr_un *)0)->sun_path + 1];
    const char *path = unix_path(addr, len, buf);
    const fs_state *s = fs_state_get();
    fs_key k;
    fs_path_class c = path != NULL ? fs_ns_classify(s, AT_FDCWD, &path, &k) : FS_PATH_OUTSIDE;
    if (c == FS_PATH_OUTSIDE)
        return fn(fd, addr, len);
    const fs_table *t = fs_state_table();
    if (c < 0 || t == NULL)
        return fs_fail(c < 0 ? c : -EIO);
    uint32_t idx;
    fs_resolved rc = fs_ns_resolve(s, t, &k, !create, &idx);
    if (rc == FS_RESOLVED_INSIDE)
        return fs_fail(create ? -EADDRINUSE : -ECONNREFUSED);   /* an input or another node's file */
    if (rc == -ENOENT && create)
        rc = fs_ns_create_path(s, t, &k);
    if (rc < 0)
        return fs_fail(rc);
    return call_with_path(fn, fd, k.buf);
}

FS_EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
    fs_real_bind_fn real = REAL(bind);
    return real == NULL ? fs_fail(-ENOSYS) : sock_call(real, 1, fd, addr, len);
}

FS_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    fs_real_connect_fn real = REAL(connect);
    return real == NULL ? fs_fail(-ENOSYS) : sock_call(real, 0, fd, addr, len);
}
