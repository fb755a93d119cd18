/* fd_table: which kernel descriptors are the shim's, and what they stand for.
 * A slot per descriptor number: kind (file or virtual directory), the table entry index, and the identity
 * (st_dev, st_ino) of the real kernel object behind it, so a stale slot (its descriptor closed behind the
 * shim's back, e.g. by fclose's internal close) is recognised and ignored. Lock-free: readers do one
 * acquire load; writers publish with a release store. Process memory: fork copies it, exec discards it.
 * Writers must not run in a vfork child (it shares this memory with its parent): callers check
 * fs_state_in_vfork_child() first. */
#ifndef FANSTORE_FD_TABLE_H
#define FANSTORE_FD_TABLE_H

#include <stdint.h>
#include <sys/types.h>

#define FS_FD_NONE 0u
#define FS_FD_FILE 1u
#define FS_FD_DIR  2u
/* A descriptor open for writing on a file of the upper tree (index unused). Such slots are invisible to fs_fd_get
 * (the descriptor is a plain local file to every other wrapper); see upper.h. */
#define FS_FD_OUTPUT 3u
/* A slice: a descriptor on a partition copy, positioned inside one entry's body, whose reads the shim keeps in the
 * window [base, base + len) (docs/slices.md). fs_fd_get reports it as FS_FD_FILE with info.slice = 1, so every
 * wrapper that answers for files (fstat, fgetxattr...) treats it as one; the read family looks at the window. */
#define FS_FD_SLICE 4u

/* Highest descriptor number tracked + 1; a shim descriptor above it is closed again and fails with EMFILE. */
#define FS_FD_MAX (1u << 20)

typedef struct fs_fd_info {
    uint32_t kind;       /* FS_FD_FILE or FS_FD_DIR */
    uint32_t index;      /* metadata table entry */
    uint64_t dev;        /* real st_dev / st_ino of the kernel object at registration */
    uint64_t ino;
    uint32_t slice;      /* 1: a slice; base and len are its window in the partition copy */
    uint64_t base;
    uint64_t len;
} fs_fd_info;

/* Records fd. Returns 0, or -ENOMEM / -EMFILE when it cannot be tracked. */
int fs_fd_set(int fd, uint32_t kind, uint32_t index, uint64_t dev, uint64_t ino);
/* Records fd as a slice of entry index: window [base, base + len) of the object (dev, ino). */
int fs_fd_set_slice(int fd, uint32_t index, uint64_t dev, uint64_t ino, uint64_t base, uint64_t len);
/* 1 and *out when fd is a slice (one load when no descriptor was ever registered). */
int fs_fd_get_slice(int fd, fs_fd_info *out);
/* Calls fn(fd, info, arg) for every slice in the table (exec uses it to find descriptors an image would inherit). */
void fs_fd_each_slice(void (*fn)(int fd, const fs_fd_info *info, void *arg), void *arg);
/* Forgets fd (no-op when not tracked). */
void fs_fd_clear(int fd);
/* Forgets every fd in [first, last]; on_output (may be NULL) hears of each output slot before it is cleared. */
void fs_fd_clear_range(unsigned first, unsigned last, void (*on_output)(int fd));
/* Calls fn(fd, info, arg) for every output descriptor in the table. */
void fs_fd_each_output(void (*fn)(int fd, const fs_fd_info *info, void *arg), void *arg);
/* FS_FD_OUTPUT and *out when fd is an output descriptor, FS_FD_NONE otherwise. */
uint32_t fs_fd_get_output(int fd, fs_fd_info *out);
/* Copies fd's slot (any kind) to newfd, or clears newfd when fd is not ours. */
void fs_fd_copy(int fd, int newfd);
/* Returns the kind and fills *out when fd is ours (FS_FD_NONE otherwise). Cheap: one load when no
 * descriptor was ever registered, otherwise two. */
uint32_t fs_fd_get(int fd, fs_fd_info *out);

#endif
