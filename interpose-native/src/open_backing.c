/* open_backing: opening the bytes of an input or of another rank's output (see open_backing.h).
 *   - an input published in slices.map opens as a descriptor on its partition copy, positioned at the body and
 *     registered with its window (docs/slices.md); fs_slice_materialise turns one into an ordinary descriptor;
 *   - LOCAL_RAW opens <local root>/<key> directly (asking the runtime only if it is not unpacked yet);
 *   - any other file opens <rank dir>/cache/e<index> directly when the runtime already materialised it
 *     (cache_view.h); otherwise the runtime is asked for a path (fs_wire_open) and that is opened. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cache_view.h"
#include "open_backing.h"
#include "real_libc.h"
#include "slice_fd.h"
#include "slice_view.h"
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

/* Whether the runtime's answer is an unpacked file, <local root>/<path>, which is never a pin. Anything else is a
 * cache answer, a pin, even for a LOCAL_RAW entry: one whose partition copy this node does not hold (yet: still
 * filling, or left out by --local-capacity), or whose unpacking found the local disk full, is served from the cache
 * like any other file. The cache directories are beside the local root, never under it. */
static int unpacked_answer(const fs_table *t, const char *path)
{
    size_t len = t->local_root_len;
    while (len > 0 && t->local_root[len - 1] == '/')
        len--;
    return len > 0 && strncmp(path, t->local_root, len) == 0 && path[len] == '/';
}

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
            count_direct(FS_CTR_LOCAL_OPENS, fs_entry_size(e));
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
            count_direct(FS_CTR_LOCAL_OPENS, fs_entry_size(e));
        if (fd != -ENOENT)
            return fd;
        /* Not unpacked (nor published as a slice) yet: the runtime checks it and answers. */
    } else {
        const fs_cache *c = fs_state_cache(t);
        char path[PATH_MAX];
        if (c != NULL && fs_cache_path(c, idx, fs_entry_size(e), path, sizeof path) == 0) {
            int fd = open_real_file(path, flags);
            if (fd >= 0) {
                fs_cache_touch(c, idx);   /* a hit the runtime does not see: tell its eviction */
                count_direct(FS_CTR_CACHE_OPENS, fs_entry_size(e));
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
        if (!unpacked_answer(t, path))
            fs_cache_release_pin(path);   /* our descriptor (if any) holds the file now */
    }
    return fd == -ENOENT ? -EIO : fd;
}
/* Another rank's output opened for reading: the copy the runtime answers with (fetched from the holder). */
int fs_open_output(const fs_table *t, const fs_key *k, int flags)
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

int fs_open_track(int fd, uint32_t kind, uint32_t idx)
{
    return track_window(fd, kind, idx, NO_SLICE, 0);
}

/* Opens input idx (a file of the table) for reading and registers the descriptor. */
int fs_open_input(const fs_table *t, const fs_key *k, uint32_t idx, int flags, int allow_slice)
{
    uint64_t base;
    int fd = open_backing(t, k, idx, flags, allow_slice, &base);
    return fd < 0 ? fd : track_window(fd, FS_FD_FILE, idx, base, fs_entry_size(fs_table_entry(t, idx)));
}

/* The key of entry idx, as open_backing wants it. */
static int key_of(const fs_table *t, uint32_t idx, fs_key *k)
{
    ssize_t n = fs_table_key(t, idx, k->buf, sizeof k->buf);
    if (n < 0)
        return (int)n;
    k->len = (size_t)n;
    k->want_dir = 0;
    return 0;
}

/* A read open of /proc/self/fd/N (or the like) naming slice N: the entry again, as a new slice at its start. */
int fs_open_entry_again(uint32_t idx, int flags)
{
    const fs_table *t = fs_state_table();
    fs_key k;
    if (t == NULL)
        return -EIO;
    int rc = key_of(t, idx, &k);
    return rc < 0 ? rc : fs_open_input(t, &k, idx, flags, 1);
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
