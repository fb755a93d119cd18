/* wrap_open: the open and fopen families. Fourteen doors into one room, open_key():
 *   - the key resolves to a file: LOCAL_RAW opens <local root>/<key> directly (asking the runtime only if it
 *     is not unpacked yet); any other file opens <rank dir>/cache/e<index> directly when the runtime already
 *     materialised it (see cache_view.h); otherwise the runtime is asked for a path (fs_wire_open) and that is
 *     opened. The caller always gets a real kernel descriptor, registered in fd_table with the real object's
 *     identity so fstat can answer from the table.
 *   - a directory: a descriptor on the void directory, registered as FS_FD_DIR (see shim_state.h).
 *   - a new file (O_CREAT, absent key, parent directory present), or write access to a committed output: the
 *     runtime makes a staging file (copying the committed bytes unless O_TRUNC) and the caller gets a
 *     descriptor on it, counted in output_handles.c until its last close commits it.
 *   - a committed output for reading: its staging file when this rank holds it, else the runtime's copy.
 * The opens that need no request are counted in shim.counters (shim_counters.h): the runtime cannot see them.
 * Errors chosen: write access or O_TRUNC on an input, O_TMPFILE -> EROFS; O_CREAT|O_EXCL on an existing entry
 * -> EEXIST; O_DIRECTORY on a file -> ENOTDIR; write access to a
 * directory -> EISDIR; O_NOFOLLOW on a symlink -> ELOOP; runtime unreachable / table missing, or a file in the
 * table whose answers could not be opened FS_OPEN_ATTEMPTS times -> EIO (never ENOENT for a file in the table).
 * Outside paths are forwarded, except a write open of /proc/self/fd/N (or /dev/fd/N...) where N is one of our
 * file descriptors: that reaches our backing file by another name -> EROFS (see proc_fd.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cache_view.h"
#include "rank_dir.h"
#include "namespace.h"
#include "output_handles.h"
#include "output_view.h"
#include "proc_fd.h"
#include "real_libc.h"
#include "wire_client.h"
#include "wire_layout.h"

/* Flags carried from the caller to the real open of the backing file. */
#define KEEP_FLAGS (O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOATIME | O_DIRECT | O_LARGEFILE | O_PATH | O_SYNC | O_DSYNC)

static int open_real_file(const char *path, int flags)
{
    int fd = CALL_REAL(-1, open, path, O_RDONLY | (flags & KEEP_FLAGS));
    return fd < 0 ? -errno : fd;
}

/* Times the shim asks the runtime for one file whose answer then cannot be opened (a reclaimed pin). */
#define FS_OPEN_ATTEMPTS 3

/* An open the runtime will not see: counted for its statistics (shim_counters.h). */
static void count_direct(enum fs_counter opens, uint64_t bytes)
{
    fs_counters *c = fs_state_counters();
    if (c != NULL)
        fs_counters_open(c, opens, bytes);
}

static int open_backing(const fs_state *s, const fs_table *t, const fs_key *k, uint32_t idx, int flags)
{
    const fs_entry *e = fs_table_entry(t, idx);
    if (e->flags & FS_ENTRY_LOCAL_RAW) {
        char path[PATH_MAX];
        int n = snprintf(path, sizeof path, "%.*s/%s", (int)t->local_root_len, t->local_root, k->buf);
        if (n < 0 || (size_t)n >= sizeof path)
            return -ENAMETOOLONG;
        int fd = open_real_file(path, flags);
        if (fd >= 0)
            count_direct(FS_CTR_LOCAL_OPENS, e->size);
        if (fd != -ENOENT)
            return fd;
        /* Not unpacked yet (the runtime unpacks in the background after it reports ready): the runtime
         * unpacks this one now and answers with the same path. */
    } else {
        const fs_cache *c = fs_state_cache(t);
        char path[PATH_MAX];
        if (c != NULL && fs_cache_path(c, idx, e->size, path, sizeof path) == 0) {
            int fd = open_real_file(path, flags);
            if (fd >= 0) {
                fs_cache_touch(c, idx);   /* a hit the runtime does not see: tell its eviction */
                count_direct(FS_CTR_CACHE_OPENS, e->size);
            }
            if (fd != -ENOENT)
                return fd;
            /* Not materialised yet, or just evicted: the runtime (re)materialises it. */
        }
    }
    int err = -EIO;
    fs_wire *w = fs_state_wire(&err);
    if (w == NULL)
        return err;
    /* A cache answer is a pin (a name for this open alone, cache_view.h), so eviction cannot remove it before our open;
     * only a pin the runtime reclaimed because we stalled past its grace can be gone: ask again, then give up with
     * EIO, never ENOENT, for a file that is in the table. */
    int fd = -ENOENT;
    for (int attempt = 0; attempt < FS_OPEN_ATTEMPTS && fd == -ENOENT; attempt++) {
        char path[PATH_MAX];
        fs_state_enter();
        int rc = fs_wire_open(w, k->buf, k->len, idx, t->generation, flags, path, sizeof path);
        fs_state_leave();
        if (rc < 0)
            return rc;
        fd = open_real_file(path, flags);
        if (!(e->flags & FS_ENTRY_LOCAL_RAW))
            fs_cache_release_pin(path);   /* our descriptor (if any) holds the file now */
    }
    (void)s;
    return fd == -ENOENT ? -EIO : fd;
}

/* A committed output opened for reading: read-only, from the holder's staging file (this rank) or the copy the
 * runtime answers with (another rank holds it). */
static int open_output(const fs_state *s, const fs_table *t, const fs_key *k, uint32_t idx, int flags)
{
    const fs_ov_state *st = fs_ov_state_of(idx - (uint32_t)t->entry_count);
    const char *staging = fs_ov_staging();
    if (st == NULL)
        return -ENOENT;
    if (st->holder == fs_ov_rank() && staging != NULL) {
        char path[PATH_MAX];
        int n = snprintf(path, sizeof path, "%s/" FS_RANK_STAGING_FILE_PREFIX "%llu", staging,
                         (unsigned long long)st->object_id);
        if (n < 0 || (size_t)n >= sizeof path)
            return -ENAMETOOLONG;
        return open_real_file(path, flags);
    }
    int err = -EIO;
    fs_wire *w = fs_state_wire(&err);
    if (w == NULL)
        return err;
    char path[PATH_MAX];
    fs_state_enter();
    int rc = fs_wire_open(w, k->buf, k->len, FS_ENTRY_NONE, t->generation, flags, path, sizeof path);
    fs_state_leave();
    (void)s;
    return rc < 0 ? rc : open_real_file(path, flags);
}

/* Registers fd as ours; a descriptor that cannot be tracked is closed again (EMFILE/ENOMEM). */
static int track(int fd, uint32_t kind, uint32_t idx)
{
    if (fs_state_in_vfork_child())
        return fd;                       /* parent's memory: leave it alone; the child execs or exits */
    struct stat st;
    int rc = CALL_REAL(-1, fstat, fd, &st) == 0 ? fs_fd_set(fd, kind, idx, st.st_dev, st.st_ino) : -errno;
    if (rc < 0) {
        CALL_REAL(-1, close, fd);
        return rc;
    }
    return fd;
}

/* Opens an inside key. Returns a descriptor or -errno. */
static int open_key(const fs_state *s, fs_key *k, int flags, mode_t mode)
{
    const fs_table *t = fs_state_table();
    if (t == NULL)
        return -EIO;
    int writes = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
    if ((flags & O_TMPFILE) == O_TMPFILE)
        return -EROFS;
    uint32_t idx;
    int rc = fs_ns_resolve(s, t, k, !(flags & O_NOFOLLOW), &idx);
    if (rc == FS_RESOLVED_OUTSIDE) {
        int fd = CALL_REAL(-1, open, k->buf, flags, mode);
        return fd < 0 ? -errno : fd;
    }
    if (rc == -ENOENT && (flags & O_CREAT)) {
        int p = fs_ns_parent_exists(s, t, k);
        if (p < 0)
            return p;
        if (k->want_dir || k->len == 0)
            return -EISDIR;
        return fs_state_in_vfork_child() ? -ENOSYS : fs_oh_create(s, k->buf, k->len, flags, mode);
    }
    if (rc < 0)
        return rc;
    uint32_t emode = fs_ns_mode(t, idx);
    if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
        return -EEXIST;
    if (S_ISLNK(emode))
        return -ELOOP;                   /* O_NOFOLLOW on a link */
    if (S_ISDIR(emode)) {
        if (writes)
            return -EISDIR;
        int fd = fs_state_void_dup(flags & O_CLOEXEC);
        return fd < 0 ? fd : track(fd, FS_FD_DIR, idx);
    }
    if (flags & O_DIRECTORY)
        return -ENOTDIR;
    if (fs_ns_is_output(t, idx)) {
        if (writes)   /* copy-on-write: a new staging file, committed over this one at its last close */
            return fs_state_in_vfork_child() ? -ENOSYS : fs_oh_create(s, k->buf, k->len, flags, mode);
        int fd = open_output(s, t, k, idx, flags);
        return fd < 0 ? fd : track(fd, FS_FD_FILE, idx);
    }
    if (writes)
        return -EROFS;
    int fd = open_backing(s, t, k, idx, flags);
    return fd < 0 ? fd : track(fd, FS_FD_FILE, idx);
}

static int finish(int rc)
{
    return rc < 0 ? fs_fail(rc) : rc;
}

/* Forwards an outside open (the expression real), unless it would write one of our files by its /proc name. */
#define OUTSIDE_OPEN(path, flags, real) \
    (fs_proc_fd_refuse_write((path), (flags)) ? fs_fail(-EROFS) : (real))

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
        int c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return OUTSIDE_OPEN(path, flags, CALL_REAL(-1, name, path, flags, mode)); \
        return finish(c < 0 ? c : open_key(fs_state_get(), &k, flags, mode)); \
    }

#define OPENAT_DOOR(name) \
    FS_EXPORT int name(int dirfd, const char *path, int flags, ...) \
    { \
        MODE_ARG(flags, flags) \
        fs_key k; \
        int c = fs_ns_classify(fs_state_get(), dirfd, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return OUTSIDE_OPEN(path, flags, CALL_REAL(-1, name, dirfd, path, flags, mode)); \
        return finish(c < 0 ? c : open_key(fs_state_get(), &k, flags, mode)); \
    }

/* Fortified entry points (no mode: glibc aborts if O_CREAT is used without one). */
#define OPEN2_DOOR(name) \
    FS_EXPORT int name(const char *path, int flags) \
    { \
        fs_key k; \
        int c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return OUTSIDE_OPEN(path, flags, CALL_REAL(-1, name, path, flags)); \
        return finish(c < 0 ? c : open_key(fs_state_get(), &k, flags, 0)); \
    }

#define OPENAT2_DOOR(name) \
    FS_EXPORT int name(int dirfd, const char *path, int flags) \
    { \
        fs_key k; \
        int c = fs_ns_classify(fs_state_get(), dirfd, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return OUTSIDE_OPEN(path, flags, CALL_REAL(-1, name, dirfd, path, flags)); \
        return finish(c < 0 ? c : open_key(fs_state_get(), &k, flags, 0)); \
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
        int c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return OUTSIDE_OPEN(path, O_CREAT | O_WRONLY | O_TRUNC, CALL_REAL(-1, name, path, mode)); \
        return finish(c < 0 ? c : open_key(fs_state_get(), &k, O_CREAT | O_WRONLY | O_TRUNC, mode)); \
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
    int fd = open_key(fs_state_get(), k, flags, 0666);
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
        int c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
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
    int fd = open_key(fs_state_get(), k, flags, 0666);
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
        int c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return OUTSIDE_FOPEN(path, mode, CALL_REAL(NULL, name, path, mode, stream)); \
        if (c < 0) \
            return (fs_fail(c), NULL); \
        return freopen_key(&k, mode, stream, (fs_real_freopen_fn)REAL(name)); \
    }

FREOPEN_DOOR(freopen)
FREOPEN_DOOR(freopen64)
