/* wrap_dir: directory streams. A directory of the table (or another rank's output directory) is listed from the
 * table: ".", "..", then its children in table order (sorted by name bytes), with d_ino = index + 1 and d_type
 * from the mode, so Python's scandir never needs a stat per entry; then other ranks' outputs in it (an output this
 * node also has in its upper tree with that place's inode and type, as stat answers for it); then what
 * this node made in it (its place in the upper tree, read with the real readdir). A directory only this node
 * made is the real directory in the upper tree, opened by libc.
 * Owns: the fs_dir objects. They live in one arena mapped on first use, and that arena is the set of our
 * DIR*s: a pointer inside it is ours, any other DIR* is libc's and is forwarded untouched. Membership is
 * an address compare (no lock on readdir); allocation and release take a mutex (opendir/closedir only).
 * At most FS_DIR_MAX virtual streams are open at once; beyond that opendir fails with EMFILE.
 * A stream holds a descriptor on the void directory registered as FS_FD_DIR (dirfd() returns it, so
 * openat/fstatat relative to it work); closedir closes it.
 * Like glibc's, one stream must not be read from two threads at once; distinct streams are independent. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "namespace.h"
#include "output_view.h"
#include "real_libc.h"
#include "upper.h"

#define FS_DIR_MAX 4096

_Static_assert(sizeof(struct dirent) == sizeof(struct dirent64), "dirent and dirent64 share one layout here");

typedef struct fs_dir {
    uint32_t in_use;
    uint32_t index;        /* the directory's table entry */
    uint32_t pos;          /* 0 ".", 1 "..", 2 + i: child i */
    int      fd;
    int      upper_phase;  /* 1: listing this node's entries from up */
    DIR     *up;           /* the directory's place in the upper tree (NULL: none, or not reached yet) */
    struct dirent64 ent;
} fs_dir;

static _Atomic(fs_dir *) arena;
static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;

static fs_dir *ours(DIR *d)
{
    fs_dir *a = atomic_load_explicit(&arena, memory_order_acquire);
    uintptr_t p = (uintptr_t)d, lo = (uintptr_t)a;
    if (a == NULL || p < lo || p >= lo + sizeof(fs_dir) * FS_DIR_MAX)
        return NULL;
    return (fs_dir *)d;
}

static fs_dir *dir_alloc(void)
{
    pthread_mutex_lock(&arena_lock);
    fs_dir *a = atomic_load_explicit(&arena, memory_order_acquire);
    if (a == NULL) {
        a = mmap(NULL, sizeof(fs_dir) * FS_DIR_MAX, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (a == MAP_FAILED)
            a = NULL;
        else
            atomic_store_explicit(&arena, a, memory_order_release);
    }
    fs_dir *d = NULL;
    for (size_t i = 0; a != NULL && i < FS_DIR_MAX; i++) {
        if (!a[i].in_use) {
            d = &a[i];
            d->in_use = 1;
            break;
        }
    }
    pthread_mutex_unlock(&arena_lock);
    return d;
}

static void dir_free(fs_dir *d)
{
    pthread_mutex_lock(&arena_lock);
    d->in_use = 0;
    pthread_mutex_unlock(&arena_lock);
}

/* Wraps descriptor fd (ours, FS_FD_DIR on entry idx) in a stream; the stream owns fd from here. */
static DIR *dir_open_fd(int fd, uint32_t idx)
{
    if (fs_state_in_vfork_child())
        return (errno = ENOSYS, NULL);
    fs_dir *d = dir_alloc();
    if (d == NULL)
        return (errno = EMFILE, NULL);
    d->index = idx;
    d->pos = 0;
    d->fd = fd;
    d->upper_phase = 0;
    d->up = NULL;
    return (DIR *)d;
}

/* opendir of an inside key: resolve to a directory, take a void descriptor, wrap it. */
static DIR *dir_open_key(fs_path_class c, fs_key *k)
{
    if (c < 0)
        return (fs_fail(c), NULL);
    const fs_state *s = fs_state_get();
    const fs_table *t = fs_state_table();
    if (s == NULL || t == NULL)
        return (fs_fail(-EIO), NULL);
    uint32_t idx;
    fs_resolved rc = fs_ns_resolve(s, t, k, 1, &idx);
    if (rc == FS_RESOLVED_OUTSIDE) {
        /* This node's directory. When other ranks know it (a recorded directory: they may have files in it), it
         * is listed like theirs, this node's entries last; otherwise libc lists the real one. */
        char key[PATH_MAX];
        int kl = fs_up_key(s, k->buf, k->len, key, sizeof key);
        int64_t slot = kl > 0 ? fs_ov_lookup(s, key, (size_t)kl, NULL) : -1;
        if (slot < 0 || !S_ISDIR(fs_ns_mode(t, (uint32_t)t->entry_count + (uint32_t)slot)))
            return CALL_REAL(NULL, opendir, k->buf);
        idx = (uint32_t)t->entry_count + (uint32_t)slot;
    } else if (rc < 0) {
        return (fs_fail(rc), NULL);
    }
    if (!S_ISDIR(fs_ns_mode(t, idx)))
        return (fs_fail(-ENOTDIR), NULL);
    int fd = fs_state_void_dup(1);
    if (fd < 0)
        return (fs_fail(fd), NULL);
    struct stat st;
    if (CALL_REAL(-1, fstat, fd, &st) != 0 || fs_fd_set(fd, FS_FD_DIR, idx, st.st_dev, st.st_ino) != 0) {
        CALL_REAL(-1, close, fd);
        return (fs_fail(-EMFILE), NULL);
    }
    DIR *d = dir_open_fd(fd, idx);
    if (d == NULL) {
        int saved = errno;
        fs_fd_clear(fd);
        CALL_REAL(-1, close, fd);
        errno = saved;
    }
    return d;
}

/* Is key (klen bytes) a direct child of directory key dir (dlen bytes; "" is the root)? */
static int child_of(const char *key, size_t klen, const char *dir, size_t dlen)
{
    size_t start = dlen == 0 ? 0 : dlen + 1;
    if (klen <= start || (dlen > 0 && (memcmp(key, dir, dlen) != 0 || key[dlen] != '/')))
        return 0;
    return memchr(key + start, '/', klen - start) == NULL;
}

/* Closes the stream's upper-tree part (rewind, seek, close). */
static void upper_reset(fs_dir *d)
{
    if (d->up != NULL)
        CALL_REAL(-1, closedir, d->up);
    d->up = NULL;
    d->upper_phase = 0;
}

/* The next entry this node made in directory dkey that the table and other ranks' outputs did not list, or NULL
 * at the end. */
static struct dirent64 *upper_next(fs_dir *d, const char *dkey, size_t dlen)
{
    const fs_state *s = fs_state_get();
    const fs_table *t = fs_state_table();
    if (!d->upper_phase) {
        d->upper_phase = 1;
        char path[PATH_MAX];
        int saved = errno;   /* a directory this node never wrote in has no upper place: not an error */
        if (s != NULL && fs_up_path(s, dkey, dlen, path, sizeof path) >= 0)
            d->up = CALL_REAL(NULL, opendir, path);
        errno = saved;
    }
    if (d->up == NULL || s == NULL || t == NULL)
        return NULL;
    struct dirent64 *e;
    while ((e = CALL_REAL(NULL, readdir64, d->up)) != NULL) {
        size_t len = strlen(e->d_name);
        if ((len == 1 && e->d_name[0] == '.') || (len == 2 && e->d_name[0] == '.' && e->d_name[1] == '.'))
            continue;
        char key[PATH_MAX];
        if (dlen + 1 + len >= sizeof key)
            continue;
        size_t kl = 0;
        if (dlen > 0) {
            memcpy(key, dkey, dlen);
            key[dlen] = '/';
            kl = dlen + 1;
        }
        memcpy(key + kl, e->d_name, len + 1);
        kl += len;
        if (fs_table_lookup(t, key, kl) >= 0 || fs_ov_lookup(s, key, kl, NULL) >= 0)
            continue;      /* listed already: an input directory made here as a parent, or another rank's */
        d->pos++;
        memcpy(&d->ent, e, sizeof d->ent);
        d->ent.d_off = (off64_t)d->pos;
        return &d->ent;
    }
    return NULL;
}

/* Next entry of a virtual stream, or NULL at the end (errno untouched, as readdir requires). Positions: ".",
 * "..", the table's children (input directories: the entries [first, first + count), each name in one or two
 * pieces, copied straight into the dirent), then committed outputs by view slot (a slot's number never changes, so
 * a stream keeps its place while outputs appear). The directory's key is rebuilt only past the table's part. */
static struct dirent64 *dir_next(fs_dir *d)
{
    const fs_table *t = fs_state_table();
    if (t == NULL)
        return (fs_fail(-EIO), NULL);
    int out_dir = fs_ns_is_output(t, d->index);
    const fs_entry *dir = out_dir ? NULL : fs_table_entry(t, d->index);
    uint32_t table_children = out_dir ? 0 : fs_dir_count(dir);
    char dkey[PATH_MAX];
    ssize_t dlen = -1;
    if (d->pos == 0)
        fs_ov_refresh(fs_state_get());
/* The directory's key, built on first need (it cannot fail: the stream was opened by this key). */
#define NEED_DKEY() do { if (dlen < 0 && (dlen = fs_ns_key(t, d->index, dkey, sizeof dkey)) < 0) return NULL; } while (0)
    if (d->upper_phase) {
        NEED_DKEY();
        return upper_next(d, dkey, (size_t)dlen);
    }
    for (;;) {
        uint32_t pos = d->pos;
        fs_name name = { .head = "", .head_len = 0 };
        uint32_t idx;
        if (pos == 0) {
            name.tail = ".", name.tail_len = 1, idx = d->index;
        } else if (pos == 1) {
            name.tail = "..", name.tail_len = 2;
            if (!out_dir) {
                idx = fs_entry_parent(dir);
            } else {
                NEED_DKEY();
                const char *slash = memrchr(dkey, '/', (size_t)dlen);
                int64_t p = fs_ns_find(fs_state_get(), t, dkey, slash ? (size_t)(slash - dkey) : 0);
                idx = p < 0 ? 0 : (uint32_t)p;
            }
        } else if (pos - 2 < table_children) {
            idx = fs_dir_first(dir) + (pos - 2);
            fs_entry_name(t, fs_table_entry(t, idx), &name);
        } else {
            uint32_t slot = pos - 2 - table_children;
            NEED_DKEY();
            if (slot >= fs_ov_count())
                return upper_next(d, dkey, (size_t)dlen);
            d->pos = pos + 1;
            size_t klen;
            const char *key = fs_ov_key(slot, &klen);
            if (fs_ov_state_of(slot) == NULL || !child_of(key, klen, dkey, (size_t)dlen))
                continue;
            size_t start = dlen == 0 ? 0 : (size_t)dlen + 1;
            name.tail = key + start, name.tail_len = (uint32_t)(klen - start), idx = (uint32_t)t->entry_count + slot;
        }
        d->pos = pos + 1;
        size_t len = (size_t)name.head_len + name.tail_len;
        if (len >= sizeof d->ent.d_name)
            continue;      /* cannot be represented in a dirent: skipped, as no real name is this long */
        d->ent.d_ino = (ino64_t)idx + 1;
        d->ent.d_type = (unsigned char)IFTODT(fs_ns_mode(t, idx));
        if (fs_ns_is_output(t, idx)) {
            /* An output this node has: stat answers from its upper place, so the listing too. */
            char ikey[PATH_MAX];
            ssize_t il = fs_ns_key(t, idx, ikey, sizeof ikey);
            struct stat st;
            if (il >= 0 && fs_up_lstat(fs_state_get(), ikey, (size_t)il, &st) == 0)
                d->ent.d_ino = st.st_ino, d->ent.d_type = (unsigned char)IFTODT(st.st_mode);
        }
        d->ent.d_off = (off64_t)d->pos;
        d->ent.d_reclen = sizeof d->ent;
        memcpy(d->ent.d_name, name.head, name.head_len);
        memcpy(d->ent.d_name + name.head_len, name.tail, name.tail_len);
        d->ent.d_name[len] = '\0';
        return &d->ent;
    }
#undef NEED_DKEY
}

FS_EXPORT DIR *opendir(const char *path)
{
    fs_key k;
    fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k);
    if (c == FS_PATH_OUTSIDE)
        return CALL_REAL(NULL, opendir, path);
    return dir_open_key(c, &k);
}

FS_EXPORT DIR *fdopendir(int fd)
{
    fs_fd_info info;
    if (fs_fd_get(fd, &info) != FS_FD_DIR || fs_ns_fd(fd, &info, NULL) != FS_FD_DIR)
        return CALL_REAL(NULL, fdopendir, fd);
    return dir_open_fd(fd, info.index);
}

FS_EXPORT struct dirent *readdir(DIR *dirp)
{
    fs_dir *d = ours(dirp);
    if (d == NULL)
        return CALL_REAL(NULL, readdir, dirp);
    return (struct dirent *)dir_next(d);
}

FS_EXPORT struct dirent64 *readdir64(DIR *dirp)
{
    fs_dir *d = ours(dirp);
    if (d == NULL)
        return CALL_REAL(NULL, readdir64, dirp);
    return dir_next(d);
}

static int dir_next_r(fs_dir *d, struct dirent64 *entry, struct dirent64 **result)
{
    int saved = errno;
    errno = 0;
    struct dirent64 *e = dir_next(d);
    int err = e == NULL ? errno : 0;
    errno = saved;
    if (e != NULL)
        memcpy(entry, e, sizeof *entry);
    *result = e != NULL ? entry : NULL;
    return err;
}

FS_EXPORT int readdir_r(DIR *dirp, struct dirent *entry, struct dirent **result)
{
    fs_dir *d = ours(dirp);
    if (d == NULL)
        return CALL_REAL(ENOSYS, readdir_r, dirp, entry, result);
    return dir_next_r(d, (struct dirent64 *)entry, (struct dirent64 **)result);
}

FS_EXPORT int readdir64_r(DIR *dirp, struct dirent64 *entry, struct dirent64 **result)
{
    fs_dir *d = ours(dirp);
    if (d == NULL)
        return CALL_REAL(ENOSYS, readdir64_r, dirp, entry, result);
    return dir_next_r(d, entry, result);
}

FS_EXPORT void rewinddir(DIR *dirp)
{
    fs_dir *d = ours(dirp);
    if (d != NULL) {
        d->pos = 0;
        upper_reset(d);
        return;
    }
    fs_real_rewinddir_fn f = REAL(rewinddir);
    if (f)
        f(dirp);
}

FS_EXPORT void seekdir(DIR *dirp, long loc)
{
    fs_dir *d = ours(dirp);
    if (d != NULL) {
        d->pos = loc < 0 ? 0 : (uint32_t)loc;
        upper_reset(d);
        return;
    }
    fs_real_seekdir_fn f = REAL(seekdir);
    if (f)
        f(dirp, loc);
}

FS_EXPORT long telldir(DIR *dirp)
{
    fs_dir *d = ours(dirp);
    if (d == NULL)
        return CALL_REAL(-1, telldir, dirp);
    return d->pos;
}

FS_EXPORT int dirfd(DIR *dirp)
{
    fs_dir *d = ours(dirp);
    if (d == NULL)
        return CALL_REAL(-1, dirfd, dirp);
    return d->fd;
}

FS_EXPORT int closedir(DIR *dirp)
{
    fs_dir *d = ours(dirp);
    if (d == NULL)
        return CALL_REAL(-1, closedir, dirp);
    int fd = d->fd;
    if (!fs_state_in_vfork_child()) {
        upper_reset(d);
        fs_fd_clear(fd);
        dir_free(d);
    }
    return CALL_REAL(-1, close, fd);
}

/* scandir over a virtual stream: filter, copy into malloc'ed dirents (the caller frees each and the
 * array), sort with compar. */
typedef int (*filter_fn)(const struct dirent64 *);
typedef int (*compar_fn)(const struct dirent64 **, const struct dirent64 **);

static int scan(DIR *dirp, struct dirent64 ***out, filter_fn filter, compar_fn compar)
{
    if (dirp == NULL)
        return -1;
    struct dirent64 **list = NULL;
    size_t n = 0, cap = 0;
    struct dirent64 *e;
    int err = 0;
    while ((e = readdir64(dirp)) != NULL) {
        if (filter != NULL && !filter(e))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            struct dirent64 **grown = realloc(list, cap * sizeof *list);
            if (grown == NULL) {
                err = ENOMEM;
                break;
            }
            list = grown;
        }
        struct dirent64 *copy = malloc(sizeof *copy);
        if (copy == NULL) {
            err = ENOMEM;
            break;
        }
        memcpy(copy, e, sizeof *copy);
        list[n++] = copy;
    }
    closedir(dirp);
    if (err != 0) {
        while (n > 0)
            free(list[--n]);
        free(list);
        errno = err;
        return -1;
    }
    if (compar != NULL && n > 1)
        qsort(list, n, sizeof *list, (int (*)(const void *, const void *))compar);
    *out = list;
    return (int)n;
}

#define SCANDIR_DOOR(name, type) \
    FS_EXPORT int name(const char *path, type ***out, int (*filter)(const type *), \
                       int (*compar)(const type **, const type **)) \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), AT_FDCWD, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return CALL_REAL(-1, name, path, out, filter, compar); \
        return scan(dir_open_key(c, &k), (struct dirent64 ***)out, (filter_fn)filter, (compar_fn)compar); \
    }

SCANDIR_DOOR(scandir, struct dirent)
SCANDIR_DOOR(scandir64, struct dirent64)

#define SCANDIRAT_DOOR(name, type) \
    FS_EXPORT int name(int dirfd, const char *path, type ***out, int (*filter)(const type *), \
                       int (*compar)(const type **, const type **)) \
    { \
        fs_key k; \
        fs_path_class c = fs_ns_classify(fs_state_get(), dirfd, &path, &k); \
        if (c == FS_PATH_OUTSIDE) \
            return CALL_REAL(-1, name, dirfd, path, out, filter, compar); \
        return scan(dir_open_key(c, &k), (struct dirent64 ***)out, (filter_fn)filter, (compar_fn)compar); \
    }

SCANDIRAT_DOOR(scandirat, struct dirent)
SCANDIRAT_DOOR(scandirat64, struct dirent64)

/* glob: glibc's glob reads directories through internal calls; GLOB_ALTDIRFUNC makes it use ours. Only
 * when the shim is active and the caller did not bring its own directory functions. */
static void *glob_opendir(const char *path) { return opendir(path); }
static void *glob_readdir(void *d) { return readdir((DIR *)d); }
static void glob_closedir(void *d) { closedir((DIR *)d); }
static int glob_stat(const char *path, void *st) { return stat(path, (struct stat *)st); }
static int glob_lstat(const char *path, void *st) { return lstat(path, (struct stat *)st); }

#define GLOB_DOOR(name, type) \
    FS_EXPORT int name(const char *pattern, int flags, int (*errfunc)(const char *, int), type *pglob) \
    { \
        if (fs_state_get() != NULL && !(flags & GLOB_ALTDIRFUNC)) { \
            flags |= GLOB_ALTDIRFUNC; \
            pglob->gl_opendir = glob_opendir; \
            pglob->gl_readdir = (void *)glob_readdir; \
            pglob->gl_closedir = glob_closedir; \
            pglob->gl_stat = (void *)glob_stat; \
            pglob->gl_lstat = (void *)glob_lstat; \
        } \
        return CALL_REAL(GLOB_ABORTED, name, pattern, flags, errfunc, pglob); \
    }

GLOB_DOOR(glob, glob_t)
GLOB_DOOR(glob64, glob64_t)
