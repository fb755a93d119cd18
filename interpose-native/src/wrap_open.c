/* wrap_open: the open and fopen families. Fourteen doors into one room, open_key():
 *   - the key resolves to a file: LOCAL_RAW opens <local root>/<key> directly (asking the runtime only if it
 *     is not unpacked yet); any other file opens <rank dir>/cache/e<index> directly when the runtime already
 *     materialised it (see cache_view.h); otherwise the runtime is asked for a path (fs_wire_open) and that is
 *     opened. The caller always gets a real kernel descriptor, registered in fd_table with the real object's
 *     identity so fstat can answer from the table.
 *   - a directory: a descriptor on the void directory, registered as FS_FD_DIR (see shim_state.h).
 *   - a key this node wrote, or a new file (O_CREAT, absent key, parent directory present): the real file in the
 *     upper tree (upper.h), opened with the caller's flags and mode, so the kernel applies the umask and every
 *     semantics of a local file system; a descriptor that writes is tracked so that its close publishes it.
 *   - another rank's output: for reading, the runtime's copy; for writing, a copy in this node's upper tree.
 * The opens that need no request are counted in shim.counters (shim_counters.h): the runtime cannot see them.
 * Errors chosen: write access or O_TRUNC on an input, O_TMPFILE -> EROFS; O_CREAT|O_EXCL on an existing entry
 * -> EEXIST; O_DIRECTORY on a file -> ENOTDIR; write access to a
 * directory -> EISDIR; O_NOFOLLOW on a symlink -> ELOOP; runtime unreachable / table missing, or a file in the
 * table whose answers could not be opened FS_OPEN_ATTEMPTS times -> EIO (never ENOENT for a file in the table).
 * Outside paths are forwarded, except a write open of /proc/self/fd/N (or /dev/fd/N...) where N is one of our
 * file descriptors: that reaches our backing file by another name -> EROFS (see proc_fd.h); a read open of such a
 * name for a slice opens the entry again (the kernel would reopen the whole partition copy).
 * Slices (docs/slices.md): an input published in slices.map opens as a descriptor on its partition copy, positioned
 * at the body and registered with its window; fopen/freopen never get one (stdio reads with glibc's internal read,
 * which the shim cannot window), and fs_slice_materialise turns one into an ordinary descriptor in place. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cache_view.h"
#include "rank_dir.h"
#include "slice_fd.h"
#include "slice_view.h"
#include "namespace.h"
#include "output_view.h"
#include "proc_fd.h"
#include "upper.h"
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

/* Opens entry idx's slice when slices.map publishes it: a descriptor on the partition copy, positioned at the
 * body's start (*base). -ENOENT when not published; a published copy that cannot be opened is a broken node: EIO. */
static int open_slice(const fs_table *t, uint32_t idx, int flags, uint64_t *base)
{
    const fs_slices *v = fs_state_slices(t);
    const char *p;
    size_t len;
    uint64_t off;
    if (v == NULL || !fs_slices_lookup(v, idx, &p, &len, &off))
        return -ENOENT;
    char path[FS_SLICE_PATH_MAX + 1];
    memcpy(path, p, len);
    path[len] = '\0';
    int fd = open_real_file(path, flags);
    if (fd < 0)
        return fd == -ENOENT ? -EIO : fd;
    if (CALL_REAL(-1, lseek, fd, (off_t)off, SEEK_SET) < 0) {
        int err = -errno;
        CALL_REAL(-1, close, fd);
        return err;
    }
    *base = off;
    return fd;
}

/* A slice may serve this open: not O_PATH (no reads), not O_DIRECT (alignment is the caller's, relative to its
 * file), and not in a vfork child, which cannot register the window in its parent's memory. */
static int slice_allowed(int flags)
{
    return !(flags & (O_PATH | O_DIRECT)) && !fs_state_in_vfork_child();
}

/* Opens the bytes of input idx. *base is set to the body's offset when the descriptor is a slice, and stays
 * NO_SLICE otherwise; allow_slice 0 asks for an ordinary file (materialised by the runtime if need be). */
#define NO_SLICE UINT64_MAX
static int open_backing(const fs_table *t, const fs_key *k, uint32_t idx, int flags, int allow_slice,
                        uint64_t *base)
{
    const fs_entry *e = fs_table_entry(t, idx);
    *base = NO_SLICE;
    allow_slice = allow_slice && slice_allowed(flags);
    if (allow_slice) {
        int fd = open_slice(t, idx, flags, base);
        if (fd >= 0)
            count_direct(FS_CTR_LOCAL_OPENS, e->size);
        if (fd != -ENOENT)
            return fd;
    }
    if (fs_entry_local_raw(t, e)) {
        char path[PATH_MAX];
        int n = snprintf(path, sizeof path, "%.*s/%s", (int)t->local_root_len, t->local_root, k->buf);
        if (n < 0 || (size_t)n >= sizeof path)
            return -ENAMETOOLONG;
        int fd = open_real_file(path, flags);
        if (fd >= 0)
            count_direct(FS_CTR_LOCAL_OPENS, e->size);
        if (fd != -ENOENT)
            return fd;
        /* Not unpacked (nor published as a slice) yet: the runtime checks it and answers. */
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
     * EIO, never ENOENT, for a file that is in the table. An empty answer means "published as a slice". */
    int fd = -ENOENT;
    for (int attempt = 0; attempt < FS_OPEN_ATTEMPTS && fd == -ENOENT; attempt++) {
        char path[PATH_MAX];
        path[0] = '\0';
        fs_state_enter();
        int rc = fs_wire_open(w, k->buf, k->len, idx, t->generation, flags | (allow_slice ? FS_OPEN_SLICE_OK : 0),
                              path, sizeof path);
        fs_state_leave();
        if (rc < 0)
            return rc;
        if (path[0] == '\0') {
            fd = allow_slice ? open_slice(t, idx, flags, base) : -EIO;
            continue;
        }
        fd = open_real_file(path, flags);
        if (!fs_entry_local_raw(t, e))
            fs_cache_release_pin(path);   /* our descriptor (if any) holds the file now */
    }
    return fd == -ENOENT ? -EIO : fd;
}
/* Another rank's output opened for reading: the copy the runtime answers with (fetched from the holder). */
static int open_output(const fs_table *t, const fs_key *k, int flags)
{
    int err = -EIO;
    fs_wire *w = fs_state_wire(&err);
    if (w == NULL)
        return err;
    char path[PATH_MAX];
    fs_state_enter();
    int rc = fs_wire_open(w, k->buf, k->len, FS_ENTRY_NONE, t->generation, flags, path, sizeof path);
    fs_state_leave();
    return rc < 0 ? rc : open_real_file(path, flags);
}

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
static int copy_up(const fs_state *s, const fs_table *t, fs_key *k, uint32_t idx, int flags, mode_t mode)
{
    if (fs_state_in_vfork_child())
        return -ENOSYS;
    const fs_ov_state *st = fs_ov_state_of(idx - (uint32_t)t->entry_count);
    if (st == NULL)
        return -ENOENT;
    int src = -1;
    if (!(flags & O_TRUNC) && (src = open_output(t, k, O_RDONLY)) < 0)
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
    (void)mode;
    return open_upper(path, flags & ~(O_CREAT | O_EXCL), 0);
}

/* Registers fd as ours (a slice when base is not NO_SLICE: window [base, base + len)); a descriptor that cannot be
 * tracked is closed again (EMFILE/ENOMEM). */
static int track_window(int fd, uint32_t kind, uint32_t idx, uint64_t base, uint64_t len)
{
    if (fs_state_in_vfork_child())
        return fd;                       /* parent's memory: leave it alone; the child execs or exits */
    struct stat st;
    int rc = CALL_REAL(-1, fstat, fd, &st) != 0 ? -errno
           : base != NO_SLICE ? fs_fd_set_slice(fd, idx, st.st_dev, st.st_ino, base, len)
           : fs_fd_set(fd, kind, idx, st.st_dev, st.st_ino);
    if (rc < 0) {
        CALL_REAL(-1, close, fd);
        return rc;
    }
    return fd;
}

static int track(int fd, uint32_t kind, uint32_t idx)
{
    return track_window(fd, kind, idx, NO_SLICE, 0);
}

/* Opens input idx (a file of the table) for reading and registers the descriptor. */
static int open_input(const fs_table *t, const fs_key *k, uint32_t idx, int flags, int allow_slice)
{
    uint64_t base;
    int fd = open_backing(t, k, idx, flags, allow_slice, &base);
    return fd < 0 ? fd : track_window(fd, FS_FD_FILE, idx, base, fs_table_entry(t, idx)->size);
}

/* The key of entry idx, as open_backing wants it. */
static int key_of(const fs_table *t, uint32_t idx, fs_key *k)
{
    const fs_entry *e = fs_table_entry(t, idx);
    if (e->key_len >= sizeof k->buf)
        return -ENAMETOOLONG;
    memcpy(k->buf, fs_entry_key(t, e), e->key_len);
    k->buf[e->key_len] = '\0';
    k->len = e->key_len;
    k->want_dir = 0;
    return 0;
}

/* A read open of /proc/self/fd/N (or the like) naming slice N: the entry again, as a new slice at its start. */
static int reopen_entry(uint32_t idx, int flags)
{
    const fs_table *t = fs_state_table();
    fs_key k;
    if (t == NULL)
        return -EIO;
    int rc = key_of(t, idx, &k);
    return rc < 0 ? rc : open_input(t, &k, idx, flags, 1);
}

int fs_slice_materialise(int fd)
{
    fs_fd_info info;
    if (!fs_fd_get_slice(fd, &info) || fs_state_in_vfork_child())
        return 0;
    struct stat st;
    if (CALL_REAL(-1, fstat, fd, &st) != 0 || (uint64_t)st.st_dev != info.dev || (uint64_t)st.st_ino != info.ino) {
        fs_fd_clear(fd);      /* closed behind our back and the number reused: not a slice any more */
        return 0;
    }
    const fs_table *t = fs_state_table();
    fs_key k;
    if (t == NULL)
        return -EIO;
    int rc = key_of(t, info.index, &k);
    if (rc < 0)
        return rc;
    off_t cur = CALL_REAL(-1, lseek, fd, 0, SEEK_CUR);
    int fl = CALL_REAL(-1, fcntl, fd, F_GETFL);
    int fdf = CALL_REAL(-1, fcntl, fd, F_GETFD);
    if (cur < 0 || fl < 0 || fdf < 0)
        return -errno;
    uint64_t base;
    int nfd = open_backing(t, &k, info.index, O_RDONLY | (fl & KEEP_FLAGS & ~O_CLOEXEC), 0, &base);
    if (nfd < 0)
        return nfd;
    off_t pos = (uint64_t)cur > info.base ? (off_t)((uint64_t)cur - info.base) : 0;
    if (CALL_REAL(-1, lseek, nfd, pos, SEEK_SET) < 0 ||
        CALL_REAL(-1, dup3, nfd, fd, (fdf & FD_CLOEXEC) ? O_CLOEXEC : 0) < 0) {
        int err = -errno;
        CALL_REAL(-1, close, nfd);
        return err;
    }
    CALL_REAL(-1, close, nfd);
    if (CALL_REAL(-1, fstat, fd, &st) == 0)
        fs_fd_set(fd, FS_FD_FILE, info.index, st.st_dev, st.st_ino);
    else
        fs_fd_clear(fd);
    return 0;
}

/* Opens an inside key. Returns a descriptor or -errno. */
static int open_key(const fs_state *s, fs_key *k, int flags, mode_t mode, int allow_slice)
{
    const fs_table *t = fs_state_table();
    if (t == NULL)
        return -EIO;
    int writes = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
    uint32_t idx;
    fs_resolved rc = fs_ns_resolve(s, t, k, !(flags & O_NOFOLLOW), &idx);
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
        return fd < 0 ? fd : track(fd, FS_FD_DIR, idx);
    }
    if (flags & O_DIRECTORY)
        return -ENOTDIR;
    if (fs_ns_is_output(t, idx)) {
        if (writes)
            return copy_up(s, t, k, idx, flags, mode);
        int fd = open_output(t, k, flags);
        return fd < 0 ? fd : track(fd, FS_FD_FILE, idx);
    }
    if (writes)
        return -EROFS;
    return open_input(t, k, idx, flags, allow_slice);
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
       : fs_proc_fd_slice((path), &fs__idx) ? finish(reopen_entry(fs__idx, (flags))) : tracked((real), (flags)); })

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
        if (c == FS_PATH_OUTSIDE) \
            return OUTSIDE_OPEN(path, flags, CALL_REAL(-1, name, dirfd, path, flags, mode)); \
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
        if (c == FS_PATH_OUTSIDE) \
            return OUTSIDE_OPEN(path, flags, CALL_REAL(-1, name, dirfd, path, flags)); \
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
