/* output_handles: the output files this process writes, and when to tell the runtime.
 * A handle (one staging file, named by the runtime's id) may sit behind several descriptors of this process
 * (dup, dup2, fcntl F_DUPFD, fdopen) and of its fork children. This process counts its own descriptors per
 * handle; when the count drops to 0 it sends RELEASE, and the runtime commits the file once every process that
 * held it has released it. fork() reports the child as a holder before returning (HOLD), so a parent that
 * closes at once cannot commit under a child still writing. Normal exit and _exit release what is still open
 * (after flushing stdio); a process killed by a signal releases nothing, and the runtime's sweeper deletes a
 * handle whose last holder died that way: a half-written file is never published.
 * An exec'd image finds the output descriptors it inherited (e.g. a shell redirection) when it starts.
 * None of this runs in a vfork child (callers check). */
#ifndef FANSTORE_OUTPUT_HANDLES_H
#define FANSTORE_OUTPUT_HANDLES_H

#include <stdint.h>
#include <sys/types.h>

#include "shim_state.h"

/* Creates a staging file for key (CREATE) and opens it with the caller's flags: a registered output descriptor,
 * or -errno. mode: the caller's creation mode (the process umask is applied here). */
int fs_oh_create(const fs_state *s, const char *key, size_t key_len, int flags, mode_t mode);

/* One more descriptor of this process refers to handle id (dup and friends). */
void fs_oh_opened(uint32_t id);
/* One fewer; at 0 the handle is released (commit when no other process holds it). 0 or the commit's -errno. */
int fs_oh_closed(uint32_t id);
/* fork() made child: it holds every handle this process holds. */
void fs_oh_forked(pid_t child);
/* The process umask, read without changing it. */
mode_t fs_oh_umask(void);

/* Releases everything (exit paths). */
void fs_oh_release_all(void);

#endif
