/* cwd: the shim's picture of the current directory, for relative paths and getcwd.
 * Owns: one copy of the kernel's cwd, normalised, read on first need and again after each chdir the shim sees.
 * Invariants: the kernel's cwd is the truth; a namespace directory is entered as its place in this node's upper
 * tree (upper.h), and a real cwd there stands for its namespace path (mount + key), so it survives vfork,
 * posix_spawn and exec with any environment. Readers take no lock (a seqlock); writers (rare) serialise on a
 * mutex. A vfork child never writes the picture (its memory is its parent's): it reads its own when none is kept. */
#ifndef FANSTORE_CWD_H
#define FANSTORE_CWD_H

#include <stddef.h>
#include <sys/types.h>

#include "path_norm.h"
#include "shim_state.h"

/* Fills ns for a relative lookup: copies the current directory into buf (PATH_MAX bytes). */
void fs_cwd_ns(const fs_state *s, fs_ns *ns, char *buf);
/* Reads the current directory again after a successful chdir/fchdir (not in a vfork child: checked by callers). */
void fs_cwd_refresh(const fs_state *s);
/* When the cwd is a namespace directory, returns the length of its namespace path, copied into buf if it fits
 * (length < cap); -1 otherwise. */
ssize_t fs_cwd_virtual(const fs_state *s, char *buf, size_t cap);

#endif
