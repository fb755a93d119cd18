/* client_locks: the client-liveness locks on <ctl>.clients (see client_locks.h; shm README, "Liveness").
 * Owns: the clients file descriptor of each process, one OFD read lock per claimed slot byte, and the per-process
 * byte owner table.
 * Invariants: the descriptor sits at FS_OWN_FD_FLOOR (768) and up when the limit allows; a forked child opens its
 * own descriptor and closes the inherited one only if it still is the clients file; a byte is held by at most one
 * thread per process (byte_owner CAS before the lock); raw syscalls (no re-entry into the shim), errno kept by the
 * lock calls; no exit(). */
#include "client_locks.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The lowest number the shim's own long-lived descriptor takes: a program sees the descriptor numbers it would see
 * without the shim (it opens lazily, on the first request, and would otherwise take the program's next number:
 * CPython's test_closerange needs two consecutive ones). Under the usual soft RLIMIT_NOFILE of 1024; where the
 * limit is lower the descriptor stays where open put it. */
#define FS_OWN_FD_FLOOR 768

/* Opens <ctl>.clients read-only for this process; -1 if it is missing, foreign or not a regular file. */
static long open_clients(const fs_clients *c, dev_t *dev, ino_t *ino)
{
    long fd = syscall(SYS_openat, AT_FDCWD, c->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    const long high = fd < FS_OWN_FD_FLOOR ? syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, FS_OWN_FD_FLOOR) : -1;
    if (high >= 0) {
        syscall(SYS_close, fd);
        fd = high;
    }
    struct stat st;
    if (syscall(SYS_fstat, fd, &st) != 0 || st.st_uid != geteuid() || !S_ISREG(st.st_mode)) {
        syscall(SYS_close, fd);
        return -1;
    }
    if (dev != NULL) {
        *dev = st.st_dev;
        *ino = st.st_ino;
    }
    return fd;
}

/* A format-3 runtime creates <ctl>.clients before ctl: without it our slots would look dead to its sweeper. */
int fs_clients_attach(fs_clients *c, const char *ctl_path, uint32_t slot_count, uint32_t pid)
{
    const int n = snprintf(c->path, sizeof c->path, "%s.clients", ctl_path);
    if (n < 0 || (size_t)n >= sizeof c->path)
        return -ENAMETOOLONG;
    c->byte_owner = calloc(slot_count, sizeof *c->byte_owner);
    if (c->byte_owner == NULL)
        return -ENOMEM;
    const long fd = open_clients(c, &c->dev, &c->ino);
    if (fd < 0) {
        free(c->byte_owner);
        return -EPROTO;
    }
    atomic_store_explicit(&c->owner, ((uint64_t)pid << 32) | (uint32_t)fd, memory_order_release);
    return 0;
}

/* This process's descriptor of <ctl>.clients, opened anew after a fork (see owner); -1 if that fails. */
int fs_clients_fd(fs_clients *c, uint32_t pid)
{
    for (;;) {
        uint64_t seen = atomic_load_explicit(&c->owner, memory_order_acquire);
        if ((uint32_t)(seen >> 32) == pid)
            return (int)(uint32_t)seen;
        const long fd = open_clients(c, NULL, NULL);
        if (fd < 0)
            return -1;
        const uint64_t mine = ((uint64_t)pid << 32) | (uint32_t)fd;
        if (atomic_compare_exchange_strong_explicit(&c->owner, &seen, mine,
                                                    memory_order_acq_rel, memory_order_acquire)) {
            /* The parent's descriptor, inherited: close it only if it still is that file (the program may have
             * closed it and reused the number). The parent keeps its locks through its own descriptor. */
            const int old = (int)(uint32_t)seen;
            struct stat st;
            if (syscall(SYS_fstat, old, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino)
                syscall(SYS_close, old);
            return (int)fd;
        }
        syscall(SYS_close, fd);  /* another thread of this process opened one first: use it */
    }
}

/* An OFD lock (F_RDLCK or F_UNLCK) on byte `index` of the clients file; 0 or -1. Raw syscall, errno kept. */
static int lock_byte(int fd, uint32_t index, short type)
{
    const int saved = errno;
    struct flock l = { .l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)index, .l_len = 1, .l_pid = 0 };
    long rc = syscall(SYS_fcntl, fd, F_OFD_SETLK, &l);
    if (rc != 0 && errno == EINVAL) {  /* a kernel before 3.15: a process lock serves, one description per process */
        l = (struct flock){ .l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)index, .l_len = 1 };
        rc = syscall(SYS_fcntl, fd, F_SETLK, &l);
    }
    errno = saved;
    return rc == 0 ? 0 : -1;
}

/* Takes byte `index` for this process's thread: the per-process reservation, then the OFD read lock. */
int fs_clients_take(fs_clients *c, int fd, uint32_t pid, uint32_t index)
{
    _Atomic int32_t *owner = &c->byte_owner[index];
    int32_t seen = atomic_load_explicit(owner, memory_order_acquire);
    if (seen == (int32_t)pid)
        return -1;  /* another thread of ours is leaving or taking this slot */
    if (!atomic_compare_exchange_strong_explicit(owner, &seen, (int32_t)pid, memory_order_acq_rel,
                                                 memory_order_acquire))
        return -1;
    if (lock_byte(fd, index, F_RDLCK) != 0) {  /* the sweeper holds it (write lock) for a moment */
        atomic_store_explicit(owner, 0, memory_order_release);
        return -1;
    }
    return 0;
}

/* Drops byte `index`: after the slot was left (FREE or ABANDONED stored), never before. */
void fs_clients_drop(fs_clients *c, int fd, uint32_t index)
{
    lock_byte(fd, index, F_UNLCK);
    atomic_store_explicit(&c->byte_owner[index], 0, memory_order_release);
}

void fs_clients_detach(fs_clients *c, uint32_t pid)
{
    const uint64_t owner = atomic_load_explicit(&c->owner, memory_order_acquire);
    if ((uint32_t)(owner >> 32) == pid)
        syscall(SYS_close, (int)(uint32_t)owner);
    free(c->byte_owner);
}
