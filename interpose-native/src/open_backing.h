/* open_backing: the real descriptor behind an open of an entry that is not this node's own output.
 * Owns: where an input's bytes come from (a slice of its partition copy, the unpacked local file, the runtime's
 * cache, or an answer of the runtime), the count of opens the runtime does not see (shim_counters.h), and the
 * registration of the descriptor in fd_table with the real object's identity (a slice with its window).
 * Invariants: the caller always gets a real kernel descriptor; a file of the table that cannot be opened after
 * FS_OPEN_ATTEMPTS answers is EIO, never ENOENT; a vfork child registers nothing (its memory is its parent's). */
#ifndef FANSTORE_OPEN_BACKING_H
#define FANSTORE_OPEN_BACKING_H

#include <stdint.h>

#include "namespace.h"

/* Opens input idx (a file of the table, key k) for reading and registers the descriptor; allow_slice 0 asks for
 * an ordinary file. A descriptor or -errno. */
int fs_open_input(const fs_table *t, const fs_key *k, uint32_t idx, int flags, int allow_slice);
/* Another rank's output opened for reading: the copy the runtime answers with (fetched from the holder). Not
 * registered. A descriptor or -errno. */
int fs_open_output(const fs_table *t, const fs_key *k, int flags);
/* Registers fd as ours (kind FS_FD_FILE or FS_FD_DIR, entry idx); a descriptor that cannot be tracked is closed
 * again. fd or -errno. */
int fs_open_track(int fd, uint32_t kind, uint32_t idx);
/* A read open of /proc/self/fd/N (or the like) naming slice N of entry idx: the entry again, as a new slice at its
 * start. A descriptor or -errno. */
int fs_open_entry_again(uint32_t idx, int flags);

#endif
