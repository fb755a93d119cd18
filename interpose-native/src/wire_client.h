/* wire_client: the shim's side of the request ring + response slots (see wire_layout.h).
 * Each process maps `ctl` lazily on first use; after fork the child remaps nothing (MAP_SHARED survives fork)
 * but re-reads its pid (pthread_atfork). All waits are bounded: a dead or stuck runtime yields -EIO. Never calls
 * exit(). Thread-safe; not async-signal-safe. Errors: see "Client errors" in the specification. */
#ifndef FANSTORE_WIRE_CLIENT_H
#define FANSTORE_WIRE_CLIENT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fs_wire fs_wire;

/* Maps <shm_dir>/ctl and checks magic/version. Returns 0 or -errno. */
int fs_wire_attach(fs_wire **out, const char *ctl_path);
void fs_wire_detach(fs_wire *w);
/* From now on each answer adds its wake-up time (the runtime's answer stamp until this client saw DONE) to
 * *sum_ns and 1 to *count, relaxed (shim.counters' FS_CTR_WAKE_NS / FS_CTR_WAKES). Call before sharing w. */
void fs_wire_count_wakeups(fs_wire *w, _Atomic uint64_t *sum_ns, _Atomic uint64_t *count);

/* Asks the runtime to materialise an entry for opening. On success writes the NUL-terminated path to open
 * into out (cap bytes) and returns 0; otherwise a negative errno (-EIO when the runtime is gone). */
int fs_wire_open(fs_wire *w, const char *key, size_t key_len, uint32_t entry_index, uint64_t generation,
                 int open_flags, char *out, size_t cap);

/* Any operation (FS_OP_* in wire_layout.h; per-op fields: runtime/.../shm/README.md). The payload is key, NUL and,
 * when target is not NULL, target, NUL. The response path (if any) goes to out (NULL: ignored). Returns the
 * runtime's result (>= 0: CREATE's handle id, else 0) or a negative errno. */
typedef struct fs_wire_request {
    uint32_t    op;
    const char *key;
    size_t      key_len;
    const char *target;       /* RENAME only */
    size_t      target_len;
    uint32_t    entry;        /* OPEN: table entry; CREATE/MKDIR: mode; HOLD/RELEASE: handle id */
    uint64_t    argument;     /* OPEN: table generation; output ops: the pid */
    int         flags;        /* OPEN: open(2) flags */
} fs_wire_request;
int fs_wire_call(fs_wire *w, const fs_wire_request *r, char *out, size_t cap);

#endif
