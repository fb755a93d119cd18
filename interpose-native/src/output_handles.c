/* output_handles: per-process descriptor counts of output handles (see output_handles.h).
 * A small table under a mutex: a process writes a few files at a time, and every path here is a system call
 * anyway. Requests to the runtime are made outside the mutex. */
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
#include "output_handles.h"
#include "output_view.h"
#include "rank_dir.h"
#include "real_libc.h"
#include "wire_client.h"
#include "wire_layout.h"

#define MAX_HANDLES 1024

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct { uint32_t id; uint32_t fds; } table[MAX_HANDLES];
static int used;   /* entries in table (compacted) */

static void reinit_lock(void) { pthread_mutex_init(&lock, NULL); }

static int request(uint32_t op, uint32_t id, pid_t pid, int flags)
{
    int err = -EIO;
    fs_wire *w = fs_state_wire(&err);
    if (w == NULL)
        return err;
    const fs_wire_request r = { .op = op, .key = "", .key_len = 0, .entry = id, .argument = (uint64_t)pid,
                                .flags = flags };
    fs_state_enter();
    int rc = fs_wire_call(w, &r, NULL, 0);
    fs_state_leave();
    return rc < 0 ? rc : 0;
}

static int add(uint32_t id)
{
    pthread_mutex_lock(&lock);
    int rc = -EMFILE;
    for (int i = 0; i < used; i++) {
        if (table[i].id == id) {
            table[i].fds++;
            rc = 0;
            break;
        }
    }
    if (rc != 0 && used < MAX_HANDLES) {
        table[used].id = id;
        table[used].fds = 1;
        used++;
        rc = 0;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

void fs_oh_opened(uint32_t id)
{
    add(id);
}

int fs_oh_closed(uint32_t id)
{
    int last = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < used; i++) {
        if (table[i].id == id) {
            if (--table[i].fds == 0) {
                table[i] = table[--used];
                last = 1;
            }
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return last ? request(FS_OP_RELEASE, id, getpid(), 0) : 0;
}

void fs_oh_forked(pid_t child)
{
    uint32_t ids[MAX_HANDLES];
    pthread_mutex_lock(&lock);
    int n = used;
    for (int i = 0; i < n; i++)
        ids[i] = table[i].id;
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n; i++)
        request(FS_OP_HOLD, ids[i], child, 0);
}

void fs_oh_release_all(void)
{
    uint32_t ids[MAX_HANDLES];
    pthread_mutex_lock(&lock);
    int n = used;
    for (int i = 0; i < n; i++)
        ids[i] = table[i].id;
    used = 0;
    pthread_mutex_unlock(&lock);
    pid_t me = getpid();
    for (int i = 0; i < n; i++)
        request(FS_OP_RELEASE, ids[i], me, 0);
}

/* The process's file-creation mask, read without changing it (umask(2) would race other threads). */
mode_t fs_oh_umask(void)
{
    long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 022;
    char buf[2048];
    long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
    syscall(SYS_close, fd);
    if (n <= 0)
        return 022;
    buf[n] = '\0';
    const char *u = strstr(buf, "\nUmask:");
    return u != NULL ? (mode_t)strtoul(u + 7, NULL, 8) : 022;
}

/* Flags the staging file is opened with: the caller's, minus creation (the runtime made the file). */
#define CREATE_DROP (O_CREAT | O_EXCL | O_NOCTTY | O_DIRECTORY | O_NOFOLLOW)

int fs_oh_create(const fs_state *s, const char *key, size_t key_len, int flags, mode_t mode)
{
    (void)s;
    int err = -EIO;
    fs_wire *w = fs_state_wire(&err);
    if (w == NULL)
        return err;
    char path[PATH_MAX];
    const fs_wire_request r = { .op = FS_OP_CREATE, .key = key, .key_len = key_len,
                                .entry = (uint32_t)(mode & ~fs_oh_umask() & 07777),
                                .argument = (uint64_t)getpid(), .flags = flags };
    fs_state_enter();
    int id = fs_wire_call(w, &r, path, sizeof path);
    fs_state_leave();
    if (id < 0)
        return id;
    int fd = CALL_REAL(-1, open, path, flags & ~CREATE_DROP, 0);
    struct stat st;
    int rc = fd < 0 ? -errno : 0;
    if (rc == 0 && CALL_REAL(-1, fstat, fd, &st) != 0)
        rc = -errno;
    if (rc == 0)
        rc = fs_fd_set(fd, FS_FD_OUTPUT, (uint32_t)id, st.st_dev, st.st_ino);
    if (rc == 0)
        rc = add((uint32_t)id);
    if (rc != 0) {
        if (fd >= 0) {
            fs_fd_clear(fd);
            CALL_REAL(-1, close, fd);
        }
        request(FS_OP_RELEASE, (uint32_t)id, getpid(), FS_RELEASE_DISCARD);
        return rc;
    }
    return fd;
}

/* An exec'd image: descriptors open for writing on a staging file are output handles it inherited. Only
 * when the job's environment is set, and only a readlink per descriptor (raw calls: wrappers must not run). */
static void adopt_inherited(void)
{
    if (getenv("FANSTORE_SHM_DIR") == NULL)
        return;
    long dfd = syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return;
    char buf[4096];
    const char marker[] = "/" FS_RANK_STAGING_DIR "/" FS_RANK_STAGING_FILE_PREFIX;
    long n;
    while ((n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            char *end;
            long fd = strtol(d->d_name, &end, 10);
            if (*end != '\0' || fd == dfd)
                continue;
            char proc[64], link[PATH_MAX];
            snprintf(proc, sizeof proc, "/proc/self/fd/%ld", fd);
            long len = syscall(SYS_readlinkat, AT_FDCWD, proc, link, sizeof link - 1);
            if (len <= 0)
                continue;
            link[len] = '\0';
            char *m = strstr(link, marker);
            long fl = syscall(SYS_fcntl, fd, F_GETFL);
            if (m == NULL || fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
                continue;
            const fs_state *s = fs_state_get();
            const char *staging = s != NULL ? (fs_ov_refresh(s), fs_ov_staging()) : NULL;
            size_t sl = staging != NULL ? strlen(staging) : 0;
            if (staging == NULL || (size_t)(m - link) != sl || strncmp(link, staging, sl) != 0)
                continue;
            unsigned long id = strtoul(m + sizeof marker - 1, &end, 10);
            struct stat st;
            if (*end != '\0' || syscall(SYS_fstat, fd, &st) != 0)
                continue;
            if (fs_fd_set((int)fd, FS_FD_OUTPUT, (uint32_t)id, st.st_dev, st.st_ino) == 0)
                add((uint32_t)id);
        }
    }
    syscall(SYS_close, dfd);
}

__attribute__((constructor)) static void output_handles_start(void)
{
    pthread_atfork(NULL, NULL, reinit_lock);
    adopt_inherited();
}

/* Normal exit: stdio buffers first (exit flushes them only after library destructors), then the handles. */
__attribute__((destructor)) static void output_handles_end(void)
{
    if (used == 0 || fs_state_in_vfork_child())
        return;
    fflush(NULL);
    fs_oh_release_all();
}
