/* wire_client: the shim's side of the request ring + response slots (see wire_layout.h).
 * Each process maps `ctl` lazily on first use; after fork the child remaps nothing (MAP_SHARED survives fork)
 * but re-reads its pid (pthread_atfork). All waits are bounded: a dead or stuck runtime yields -EIO. Never calls
 * exit(). Thread-safe; not async-signal-safe. Errors: see "Client errors" in the specification. */
#ifndef FANSTORE_WIRE_CLIENT_H
#define FANSTORE_WIRE_CLIENT_H

#include <stddef.h>
#include <stdint.h>

typedef struct fs_wire fs_wire;

/* Maps <shm_dir>/ctl and checks magic/version. Returns 0 or -errno. */
int fs_wire_attach(fs_wire **out, const char *ctl_path);
void fs_wire_detach(fs_wire *w);

/* Asks the runtime to materialise an entry for opening. On success writes the NUL-terminated path to open
 * into out (cap bytes) and returns 0; otherwise a negative errno (-EIO when the runtime is gone). */
int fs_wire_open(fs_wire *w, const char *key, size_t key_len, uint32_t entry_index, uint64_t generation,
                 int open_flags, char *out, size_t cap);

#endif
