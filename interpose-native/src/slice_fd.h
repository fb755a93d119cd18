/* slice_fd: turning a slice descriptor (fd_table.h, FS_FD_SLICE) into an ordinary one, in place, before a call the
 * shim cannot window (mmap, fdopen: wrap_slice.c; exec and spawn: wrap_exec.c). See docs/slices.md. */
#ifndef FANSTORE_SLICE_FD_H
#define FANSTORE_SLICE_FD_H

/* If fd is a live slice: the runtime's ordinary file for the entry (unpacked or cached, as a fopen gets) is
 * opened, put at the same position and dup3-ed over fd with its FD_CLOEXEC, and fd is registered as a plain file.
 * Returns 0 (also when fd is no slice), or -errno with fd unchanged. Not for a vfork child (use the memory copy). */
int fs_slice_materialise(int fd);

/* The same with a private memory copy of the window (memfd) instead of the runtime: no request, no shim state
 * touched except fd's slot (and not even that in a vfork child). For an image about to be exec-ed. */
int fs_slice_to_memory(int fd, unsigned long long base, unsigned long long len, unsigned index);

/* A vfork child made newfd a copy of fd (dup2, dup3, F_DUPFD): remembered for that child's exec only. */
void fs_slice_vfork_copied(int fd, int newfd);

#endif
