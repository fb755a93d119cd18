/* upper: the node's output tree (see upper.h). Raw system calls where a wrapper must not run (readlink of
 * /proc names, mkdir of parents); requests to the runtime go through the wire outside any lock. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd_table.h"
#include "output_journal.h"
#include "output_view.h"
#include "rank_dir.h"
#include "real_libc.h"
#include "upper.h"
#include "wire_client.h"
#include "wire_layout.h"

static pthread_mutex_t root_lock = PTHREAD_MUTEX_INITIALIZER;
static char root[PATH_MAX];
static size_t root_len;
static int root_state;   /* 1 once known (then never changes); under root_lock until then */

static void reinit_lock(void) { pthread_mutex_init(&root_lock, NULL); }

/* The kernel's name for an open descriptor: a canonical path, or -1 (" (deleted)" counts as no name). */
static long fd_name(long fd, char *buf, size_t cap)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%ld", fd);
    long n = syscall(SYS_readlinkat, AT_FDCWD, proc, buf, cap - 1);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    static const char deleted[] = " (deleted)";
    size_t dl = sizeof deleted - 1;
    if ((size_t)n > dl && strcmp(buf + n - dl, deleted) == 0)
        return -1;
    return n;
}

/* The upper directory named in the journal's header, read with raw calls (no mapping, no allocation: this also
 * runs in a vfork child, whose memory is its parent's, where a chdir into the namespace needs it). */
static long header_path(const fs_state *s, char *out, size_t cap)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/" FS_RANK_OUTPUT_JOURNAL, s->shm_dir);
    long fd = n > 0 && (size_t)n < sizeof path ? syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0)
        return -1;
    char head[FS_OJ_HEADER_SIZE];
    long got = syscall(SYS_pread64, fd, head, sizeof head, 0);
    syscall(SYS_close, fd);
    const fs_oj_header *h = (const fs_oj_header *)head;
    if (got != (long)sizeof head || memcmp(h->magic, FS_OJ_MAGIC, 8) != 0 || h->version != FS_OJ_VERSION ||
        h->staging_len == 0 ||
        h->staging_len >= FS_OJ_HEADER_SIZE - FS_OJ_STAGING_OFFSET || h->staging_len >= cap)
        return -1;
    memcpy(out, head + FS_OJ_STAGING_OFFSET, h->staging_len);
    out[h->staging_len] = '\0';
    return (long)h->staging_len;
}

const char *fs_up_root(const fs_state *s, size_t *len)
{
    if (__atomic_load_n(&root_state, __ATOMIC_ACQUIRE) == 1) {
        *len = root_len;
        return root;
    }
    if (s == NULL)
        return NULL;
    pthread_mutex_lock(&root_lock);
    if (root_state != 1) {
        char given[PATH_MAX];
        /* Canonical, as the kernel names descriptors under it (the local directory may sit behind a link). */
        long fd = header_path(s, given, sizeof given) > 0
                ? syscall(SYS_openat, AT_FDCWD, given, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
        long n = fd >= 0 ? fd_name(fd, root, sizeof root) : -1;
        if (fd >= 0)
            syscall(SYS_close, fd);
        if (n > 1) {
            root_len = (size_t)n;
            __atomic_store_n(&root_state, 1, __ATOMIC_RELEASE);
        }
        /* no journal yet (a process started before the runtime made it): tried again on the next call */
    }
    pthread_mutex_unlock(&root_lock);
    if (__atomic_load_n(&root_state, __ATOMIC_ACQUIRE) != 1)
        return NULL;
    *len = root_len;
    return root;
}

int fs_up_path(const fs_state *s, const char *key, size_t key_len, char *buf, size_t cap)
{
    size_t rl;
    const char *r = fs_up_root(s, &rl);
    if (r == NULL)
        return -EIO;
    if (rl + 1 + key_len + 1 > cap)
        return -ENAMETOOLONG;
    memcpy(buf, r, rl);
    size_t n = rl;
    if (key_len > 0) {
        buf[n++] = '/';
        memcpy(buf + n, key, key_len);
        n += key_len;
    }
    buf[n] = '\0';
    return (int)n;
}

int fs_up_lstat(const fs_state *s, const char *key, size_t key_len, struct stat *st)
{
    char path[PATH_MAX];
    int n = fs_up_path(s, key, key_len, path, sizeof path);
    if (n < 0)
        return n;
    return CALL_REAL(-1, fstatat, AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
}

int fs_up_key(const fs_state *s, const char *real, size_t real_len, char *key, size_t cap)
{
    size_t rl;
    const char *r = fs_up_root(s, &rl);
    if (r == NULL || real_len < rl || memcmp(real, r, rl) != 0 || (real_len > rl && real[rl] != '/'))
        return -1;
    size_t start = real_len > rl ? rl + 1 : rl;
    size_t n = real_len - start;
    if (n + 1 > cap)
        return -1;
    memcpy(key, real + start, n);
    key[n] = '\0';
    return (int)n;
}

int fs_up_mount_path(const fs_state *s, const char *real, size_t real_len, char *buf, size_t cap)
{
    char key[PATH_MAX];
    int kl = fs_up_key(s, real, real_len, key, sizeof key);
    if (kl < 0)
        return -ENOENT;
    if (s->mount_len + 1 + (size_t)kl >= cap)
        return -ENAMETOOLONG;
    memcpy(buf, s->mount, s->mount_len);
    size_t n = s->mount_len;
    if (kl > 0) {
        buf[n++] = '/';
        memcpy(buf + n, key, (size_t)kl);
        n += (size_t)kl;
    }
    buf[n] = '\0';
    return (int)n;
}

int fs_up_make_parents(const fs_state *s, const char *key, size_t key_len)
{
    char path[PATH_MAX];
    int n = fs_up_path(s, key, key_len, path, sizeof path);
    if (n < 0)
        return n;
    size_t rl;
    fs_up_root(s, &rl);
    /* Walk down from the root: each ancestor is made if missing (EEXIST is fine: another process made it). */
    for (size_t i = rl + 1; i < (size_t)n; i++) {
        if (path[i] != '/')
            continue;
        path[i] = '\0';
        long rc = syscall(SYS_mkdirat, AT_FDCWD, path, 0755);
        path[i] = '/';
        if (rc != 0 && errno != EEXIST)
            return -errno;
    }
    return 0;
}

int fs_up_notify(uint32_t op, const char *key, size_t key_len, const char *target, size_t target_len,
                 uint32_t mode)
{
    if (fs_state_in_vfork_child())
        return -ENOSYS;
    int err = -EIO;
    fs_wire *w = fs_state_wire(&err);
    if (w == NULL)
        return err;
    const fs_wire_request r = { .op = op, .key = key, .key_len = key_len, .target = target,
                                .target_len = target_len, .entry = mode, .argument = (uint64_t)getpid() };
    fs_state_enter();
    int rc = fs_wire_call(w, &r, NULL, 0);
    fs_state_leave();
    return rc < 0 ? rc : 0;
}

/* Publishes the file fd writes, under its current name (a rename while open is followed; an unlinked file
 * has no name and nothing is published). */
static int publish_fd(const fs_state *s, int fd)
{
    char name[PATH_MAX], key[PATH_MAX];
    long n = fd_name(fd, name, sizeof name);
    int kl = n > 0 ? fs_up_key(s, name, (size_t)n, key, sizeof key) : -1;
    if (kl <= 0)
        return 0;
    int rc = fs_up_notify(FS_OP_PUBLISH, key, (size_t)kl, NULL, 0, 0);
    return rc == 0 || rc == -ENOSPC ? rc : -EIO;
}

static void track(int fd)
{
    struct stat st;
    if (syscall(SYS_fstat, fd, &st) == 0 && S_ISREG(st.st_mode))
        fs_fd_set(fd, FS_FD_OUTPUT, 0, st.st_dev, st.st_ino);
}

void fs_up_opened(int fd, int flags)
{
    if (fd < 0 || (flags & O_ACCMODE) == O_RDONLY || (flags & O_PATH) || fs_state_in_vfork_child())
        return;
    const fs_state *s = fs_state_get();
    size_t rl;
    char name[PATH_MAX], key[PATH_MAX];
    if (s == NULL || fs_up_root(s, &rl) == NULL)
        return;
    long n = fd_name(fd, name, sizeof name);
    if (n > 0 && fs_up_key(s, name, (size_t)n, key, sizeof key) > 0)
        track(fd);
}

int fs_up_closing(int fd)
{
    fs_fd_info info;
    if (fs_fd_get_output(fd, &info) == FS_FD_NONE || fs_state_in_vfork_child())
        return 0;
    struct stat st;
    int live = syscall(SYS_fstat, fd, &st) == 0 && (uint64_t)st.st_dev == info.dev &&
               (uint64_t)st.st_ino == info.ino;
    fs_fd_clear(fd);
    const fs_state *s = fs_state_get();
    return live && s != NULL ? publish_fd(s, fd) : 0;
}

void fs_up_changed(const fs_state *s, const char *real)
{
    char key[PATH_MAX];
    int kl = s != NULL ? fs_up_key(s, real, strlen(real), key, sizeof key) : -1;
    if (kl > 0 && fs_ov_lookup_any(s, key, (size_t)kl) >= 0)
        fs_up_notify(FS_OP_PUBLISH, key, (size_t)kl, NULL, 0, 0);
}

/* An exec'd image: descriptors it inherited open for writing on the upper tree (a shell redirection) are
 * tracked like its own. Only with the job's environment, and only a readlink per descriptor. */
static void adopt_inherited(void)
{
    if (getenv("FANSTORE_SHM_DIR") == NULL)
        return;
    long dfd = syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return;
    char buf[4096];
    long n;
    while ((n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            char *end;
            long fd = strtol(d->d_name, &end, 10);
            if (*end != '\0' || fd == dfd)
                continue;
            char name[PATH_MAX];
            long fl = syscall(SYS_fcntl, fd, F_GETFL);
            if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || fd_name(fd, name, sizeof name) <= 0 ||
                strstr(name, "/" FS_RANK_UPPER_DIR "/") == NULL)
                continue;
            fs_up_opened((int)fd, (int)fl);
        }
    }
    syscall(SYS_close, dfd);
}

static void publish_left(int fd, const fs_fd_info *info, void *arg)
{
    (void)info;
    (void)arg;
    (void)fs_up_closing(fd);   /* exit paths: nobody to tell; the runtime logged why */
}

__attribute__((constructor)) static void upper_start(void)
{
    pthread_atfork(NULL, NULL, reinit_lock);
    adopt_inherited();
}

/* Normal exit: stdio buffers first (exit flushes them only after library destructors), then every file still
 * open for writing is published. */
__attribute__((destructor)) static void upper_end(void)
{
    if (fs_state_in_vfork_child())
        return;
    fflush(NULL);
    fs_fd_each_output(publish_left, NULL);
}

void fs_up_exit(void)
{
    upper_end();
}
