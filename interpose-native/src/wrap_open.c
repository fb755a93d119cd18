/* wrap_open: the open and fopen families. Fourteen doors into one room, open_key():
 *   - the key resolves to a file of the table: its bytes, opened by open_backing.c (a slice, the unpacked local
 *     file, the runtime's cache, or the runtime's answer), registered in fd_table so fstat can answer from the table;
 *   - a directory: a descriptor on the void directory, registered as FS_FD_DIR (see shim_state.h);
 *   - a key this node wrote, or a new file (O_CREAT, absent key, parent directory present): the real file in the
 *     upper tree (upper.h), opened with the caller's flags and mode, so the kernel applies the umask and every
 *     semantics of a local file system; a descriptor that writes is tracked so that its close publishes it;
 *   - another rank's output: for reading, the runtime's copy; for writing, a copy in this node's upper tree.
 * Errors chosen: write access or O_TRUNC on an input, O_TMPFILE -> EROFS; O_CREAT|O_EXCL on an existing entry
 * -> EEXIST; O_DIRECTORY on a file -> ENOTDIR; write access to a directory -> EISDIR; O_NOFOLLOW on a symlink ->
 * ELOOP; runtime unreachable / table missing, or a file in the table whose answers could not be opened -> EIO
 * (never ENOENT for a file in the table).
 * Outside paths are forwarded, except a write open of /proc/self/fd/N (or /dev/fd/N...) where N is one of our
 * file descriptors: that reaches our backing file by another name -> EROFS (see proc_fd.h); a read open of such a
 * name for a slice opens the entry again (the kernel would reopen the whole partition copy).
 * fopen/freopen never get a slice (stdio reads with glibc's internal read, which the shim cannot window). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "namespace.h"
#include "open_backing.h"
#include "output_view.h"
#include "proc_fd.h"
#include "real_libc.h"
#include "upper.h"

/* A real open of a path that may lie in the upper tree: a descriptor that writes there is tracked (upper.h). */
static int open_upper(const char *path, int flags, mode_t mode)
{
    int fd = CALL_REAL(-1, open, path, flags, mode);
    if (fd < 0)
        return -errno;
    fs_up_opened(fd, flags);
    return fd;
}

/* Write access to another rank's output: its bytes are copied into this node's upper tree first (unless O_TRUNC),
 * and the caller writes that copy, published at close like any output of this node. */
static int copy_up(const fs_state *s, const fs_table *t, fs_key *k, uint32_t idx, int flags)
{
    if (fs_state_in_vfork_child())
        return -ENOSYS;
    const fs_ov_state *st = fs_ov_state_of(idx - (uint32_t)t->entry_count);
    if (st == NULL)
        return -ENOENT;
    int src = -1;
    if (!(flags & O_TRUNC) && (src = fs_open_output(t, k, O_RDONLY)) < 0)
        return src;
    char path[PATH_MAX];
    int rc = fs_up_make_parents(s, k->buf, k->len);
    if (rc == 0)
        rc = fs_up_path(s, k->buf, k->len, path, sizeof path);
    int dst = rc < 0 ? -1 : CALL_REAL(-1, open, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st->mode & 07777);
    if (rc >= 0 && dst < 0 && errno != EEXIST)
        rc = -errno;
    if (dst >= 0 && src >= 0) {
        char buf[65536];
        ssize_t n;
        while ((n = CALL_REAL(-1, read, src, buf, sizeof buf)) > 0)
            for (ssize_t off = 0; off < n && rc >= 0;) {
                ssize_t w = write(dst, buf + off, (size_t)(n - off));   /* not wrapped */
                if (w < 0)
                    rc = -errno;
                else
                    off += w;
            }
        if (n < 0)
            rc = -errno;
    }
    if (dst >= 0)
        CALL_REAL(-1, close, dst);
    if (src >= 0)
        CALL_REAL(-1, close, src);
    if (rc < 0)
        return rc;
    return open_upper(path, flags & ~(O_CREAT | O_EXCL), 0);
}

/* Opens an inside key. Returns a descriptor or -errno. */
static int open_key(const fs_state *s, fs_key *k, int flags, mode_t mode, int allow_slice)
{
    const fs_table *t = fs_state_table();
    if (t == NULL)
        return -EIO;
    int writes = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
    uint32_t idx;
    /* O_CREAT | O_EXCL never follows a last symlink (the kernel answers EEXIST, even for a dangling one) */
    int follow = !(flags & O_NOFOLLOW) && (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
    fs_resolved rc = fs_ns_resolve(s, t, k, follow, &idx);
    if (rc == -ENOENT && (flags & O_CREAT) && (flags & O_TMPFILE) != O_TMPFILE) {
        if (k->want_dir || k->len == 0)
            return -EISDIR;
        rc = fs_ns_create_path(s, t, k);
    }
    if (rc == FS_RESOLVED_OUTSIDE)        /* this node's output, or a symlink out of the namespace */
        return open_upper(k->buf, flags, mode);
    if (rc < 0)
        return rc;
    if ((flags & O_TMPFILE) == O_TMPFILE)
        return -EROFS;
    uint32_t emode = fs_ns_mode(t, idx);
    if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
        return -EEXIST;
    if (S_ISLNK(emode))
        return -ELOOP;                   /* O_NOFOLLOW on a link */
    if (S_ISDIR(emode)) {
        if (writes)
            return -EISDIR;
        int fd = fs_state_void_dup(flags & O_CLOEXEC);
        return fd < 0 ? fd : fs_open_track(fd, FS_FD_DIR, idx);
    }
    if (flags & O_DIRECTORY)
        return -ENOTDIR;
    if (fs_ns_is_output(t, idx)) {
        if (writes)
            return copy_up(s, t, k, idx, flags);
        int fd = fs_open_output(t, k, flags);
        return fd < 0 ? fd : fs_open_track(fd, FS_FD_FILE, idx);
    }
    if (writes)
        return -EROFS;
    return fs_open_input(t, k, idx, flags, allow_slice);
}

static int finish(int rc)
{
    return rc < 0 ? fs_fail(rc) : rc;
}

/* An outside open that writes: it may name the upper tree another way (a descriptor of an upper directory). */
static int tracked(int fd, int flags)
{
    if (fd >= 0 && (flags & O_ACCMODE) != O_RDONLY) {
        int saved = errno;
        fs_up_opened(fd, flags);
        errno = saved;
    }
    return fd;
}

/* Forwards an outside open (the expression real), unless it would write one of our files by its /proc name. */
#define OUTSIDE_OPEN(path, flags, real) \
    ({ uint32_t fs__idx; \
       fs_proc_fd_refuse_write((path), (flags)) ? fs_fail(-EROFS) \
       : fs_proc_fd_slice((path), &fs__idx) ? finish(fs_open_entry_again(fs__idx, (flags))) : tracked((real), (flags)); })

/* The mode argument exists only with O_CREAT or O_TMPFILE. */
#define MODE_ARG(flags, last) \
    mode_t mode = 0; \
    if ((flags) & (O_CREAT | __O_TMPFILE)) { \
        va_list ap; va_start(ap, last); mode = (mode_t)va_arg(ap, int); va_end(ap); \
    }

#define OPEN_DOOR(name) \
    FS_EXPORT int name(const char *path, int flags, ...) \
    { \
        MODE_ARG(flags, flags) \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return OUTSIDE_OPEN(path, flags, CALL_REAL(-1, name, path, flags, mode)); \
        return finish(c < 0 ? c : open_key(fs_state_get(), &k, flags, mode, 1)); \
    }

#define OPENAT_DOOR(name) \
    FS_EXPORT int name(int dirfd, const char *path, int flags, ...) \
    { \
        MODE_ARG(flags, flags) \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), dirfd, &path, &k); \
        if (c == FS_PATH_OUTSIDE) { \
            int fd = OUTSIDE_OPEN(path, flags, CALL_REAL(-1, name, dirfd, path, flags, mode)); \
            if (fd >= 0 || !fs_ns_retry_lookup(fs_state_get(), dirfd, path, &k)) \
                return fd; \
            c = FS_PATH_INSIDE; \
        } \
        return finish(c < 0 ? c : open_key(fs_state_get(), &k, flags, mode, 1)); \
    }

/* Fortified entry points (no mode: glibc aborts if O_CREAT is used without one). */
#define OPEN2_DOOR(name) \
    FS_EXPORT int name(const char *path, int flags) \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return OUTSIDE_OPEN(path, flags, CALL_REAL(-1, name, path, flags)); \
        return finish(c < 0 ? c : open_key(fs_state_get(), &k, flags, 0, 1)); \
    }

#define OPENAT2_DOOR(name) \
    FS_EXPORT int name(int dirfd, const char *path, int flags) \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), dirfd, &path, &k); \
        if (c == FS_PATH_OUTSIDE) { \
            int fd = OUTSIDE_OPEN(path, flags, CALL_REAL(-1, name, dirfd, path, flags)); \
            if (fd >= 0 || !fs_ns_retry_lookup(fs_state_get(), dirfd, path, &k)) \
                return fd; \
            c = FS_PATH_INSIDE; \
        } \
        return finish(c < 0 ? c : open_key(fs_state_get(), &k, flags, 0, 1)); \
    }

OPEN_DOOR(open)
OPEN_DOOR(open64)
OPENAT_DOOR(openat)
OPENAT_DOOR(openat64)
OPEN2_DOOR(__open_2)
OPEN2_DOOR(__open64_2)
OPENAT2_DOOR(__openat_2)
OPENAT2_DOOR(__openat64_2)

#define CREAT_DOOR(name) \
    FS_EXPORT int name(const char *path, mode_t mode) \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return OUTSIDE_OPEN(path, O_CREAT | O_WRONLY | O_TRUNC, CALL_REAL(-1, name, path, mode)); \
        return finish(c < 0 ? c : open_key(fs_state_get(), &k, O_CREAT | O_WRONLY | O_TRUNC, mode, 1)); \
    }

CREAT_DOOR(creat)
CREAT_DOOR(creat64)

/* fopen mode string -> open flags; "r" family only is readable here, anything else writes. */
static int fopen_flags(const char *mode)
{
    int flags;
    switch (mode[0]) {
    case 'r': flags = O_RDONLY; break;
    case 'w': flags = O_WRONLY | O_CREAT | O_TRUNC; break;
    case 'a': flags = O_WRONLY | O_CREAT | O_APPEND; break;
    default: return -EINVAL;
    }
    for (const char *m = mode + 1; *m && *m != ','; m++) {
        if (*m == '+')
            flags = (flags & ~O_ACCMODE) | O_RDWR;
        else if (*m == 'e')
            flags |= O_CLOEXEC;
        else if (*m == 'x')
            flags |= O_EXCL;
    }
    return flags;
}

/* Opens an inside key for stdio: our descriptor wrapped by fdopen (not wrapped by the shim). */
static FILE *fopen_key(fs_key *k, const char *mode)
{
    int flags = fopen_flags(mode);
    if (flags < 0) {
        fs_fail(flags);
        return NULL;
    }
    int fd = open_key(fs_state_get(), k, flags, 0666, 0);
    if (fd < 0) {
        fs_fail(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, mode);
    if (f == NULL) {
        int saved = errno;
        fs_fd_clear(fd);
        CALL_REAL(-1, close, fd);
        errno = saved;
    }
    return f;
}

/* fopen's form of OUTSIDE_OPEN; a mode fopen_flags cannot read is left to libc to refuse. */
#define OUTSIDE_FOPEN(path, mode, real) \
    (fopen_flags(mode) >= 0 && fs_proc_fd_refuse_write((path), fopen_flags(mode)) \
        ? (fs_fail(-EROFS), (FILE *)NULL) : (real))

#define FOPEN_DOOR(name) \
    FS_EXPORT FILE *name(const char *path, const char *mode) \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return OUTSIDE_FOPEN(path, mode, CALL_REAL(NULL, name, path, mode)); \
        if (c < 0) \
            return (fs_fail(c), NULL); \
        return fopen_key(&k, mode); \
    }

FOPEN_DOOR(fopen)
FOPEN_DOOR(fopen64)

/* freopen onto an inside path: open it ourselves, then let libc reopen the stream on /proc/self/fd/N
 * (the same file) and register the stream's new descriptor. */
static FILE *freopen_key(fs_key *k, const char *mode, FILE *stream, fs_real_freopen_fn real)
{
    int flags = fopen_flags(mode);
    if (flags < 0)
        return (fs_fail(flags), NULL);
    int fd = open_key(fs_state_get(), k, flags, 0666, 0);
    if (fd < 0)
        return (fs_fail(fd), NULL);
    fs_fd_info info;
    fs_fd_get(fd, &info);
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    FILE *f = real ? real(proc, mode, stream) : (errno = ENOSYS, NULL);
    int saved = errno;
    fs_fd_clear(fd);
    CALL_REAL(-1, close, fd);
    if (f != NULL && info.kind == FS_FD_FILE && !fs_state_in_vfork_child()) {
        struct stat st;
        if (CALL_REAL(-1, fstat, fileno(f), &st) == 0)
            fs_fd_set(fileno(f), FS_FD_FILE, info.index, st.st_dev, st.st_ino);
    }
    errno = saved;
    return f;
}

#define FREOPEN_DOOR(name) \
    FS_EXPORT FILE *name(const char *path, const char *mode, FILE *stream) \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return OUTSIDE_FOPEN(path, mode, CALL_REAL(NULL, name, path, mode, stream)); \
        if (c < 0) \
            return (fs_fail(c), NULL); \
        return freopen_key(&k, mode, stream, (fs_real_freopen_fn)REAL(name)); \
    }

FREOPEN_DOOR(freopen)
FREOPEN_DOOR(freopen64)
