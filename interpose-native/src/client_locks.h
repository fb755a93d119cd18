/* client_locks: this process's liveness locks on <ctl>.clients, one byte per response slot (shm README, "Liveness").
 * Owns: opening the clients file (an own descriptor per process, at FS_OWN_FD_FLOOR and up), the OFD read lock on
 * each claimed slot's byte, and the per-process table of which bytes a thread of ours holds.
 * Invariants: a byte is locked from before the claim CAS until after the slot was left (FREE or ABANDONED stored);
 * at most one thread of a process holds a byte; a forked child opens its own descriptor (an inherited description
 * would keep the parent's locks alive). Raw syscalls only (no re-entry into the shim); never calls exit(). */
#ifndef FANSTORE_CLIENT_LOCKS_H
#define FANSTORE_CLIENT_LOCKS_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct fs_clients {
    char path[4096];  /* <ctl>.clients */
    dev_t dev;
    ino_t ino;
    /* This process's descriptor (its own open file description, so its own locks) of <ctl>.clients: pid << 32 |
     * fd. A fork child finds its parent's pid here and opens its own (an inherited description would keep the
     * parent's locks alive after the parent died, and share one lock per byte between two processes). */
    _Atomic uint64_t owner;
    /* Per slot: the pid of the process one of whose threads holds (or is taking) our lock on that byte, else 0.
     * Threads of one process share the description, so one thread's unlock would drop another's lock on the
     * same byte: a thread takes a byte only after CAS-ing this from anything but its own pid to its pid. */
    _Atomic int32_t *byte_owner;
} fs_clients;

/* Opens <ctl_path>.clients for process `pid` and allocates the table of `slot_count` bytes; 0 or -errno
 * (-EPROTO when the file is missing or foreign: a format-3 runtime creates it before ctl). */
int fs_clients_attach(fs_clients *c, const char *ctl_path, uint32_t slot_count, uint32_t pid);
/* Closes the descriptor if process `pid` opened it; frees the table. */
void fs_clients_detach(fs_clients *c, uint32_t pid);
/* This process's descriptor of <ctl>.clients, opened anew after a fork (see owner); -1 if that fails. */
int fs_clients_fd(fs_clients *c, uint32_t pid);
/* Takes byte `index` for this process's thread: the per-process reservation, then the OFD read lock; 0 or -1. */
int fs_clients_take(fs_clients *c, int fd, uint32_t pid, uint32_t index);
/* Drops byte `index`: after the slot was left (FREE or ABANDONED stored), never before. */
void fs_clients_drop(fs_clients *c, int fd, uint32_t index);

#endif
