package org.fanstore.runtime.shm;

import java.nio.ByteBuffer;

import jnr.ffi.LibraryLoader;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.annotations.Pinned;
import jnr.ffi.annotations.SaveError;

/**
 * The few libc calls the runtime makes (the shared-memory server, and placement's punched holes and array I/O),
 * bound once through jnr-ffi. Public only because jnr-ffi
 * generates the implementation in its own class loader; not an API.
 * {@code syscall} is variadic in C; a fixed prototype is call-compatible on Linux x86-64 and aarch64, where
 * integer arguments travel in the same registers either way.
 */
public interface NativeCalls {
    NativeCalls LIBC = LibraryLoader.create(NativeCalls.class).load("c");

    /** futex(2) via syscall(2); {@code timeout} is a struct timespec as {tv_sec, tv_nsec} or null. */
    @SaveError
    long syscall(long number, long address, int op, int value, @In long[] timeout, long address2, int value3);

    /** getuid(2). */
    int getuid();

    /** gettid(2) (glibc 2.30 on): the calling thread's id, which setpriority takes as a process id. */
    int gettid();

    /** getpriority(2): the nice value of a thread (with PRIO_PROCESS and its id), or -1 and errno on failure. */
    int getpriority(int which, int who);

    /** setpriority(2); with PRIO_PROCESS and a thread id it sets that one thread's nice value (Linux). */
    @SaveError
    int setpriority(int which, int who, int prio);

    /** open(2) without O_CREAT; -1 and errno on failure. */
    @SaveError
    int open(String path, int flags);

    /** fallocate(2); with FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE it frees the blocks of a byte range. */
    @SaveError
    int fallocate(int fd, int mode, long offset, long length);

    /** close(2). */
    int close(int fd);

    /** pread(2) into dst's remaining bytes; a heap buffer's array is pinned for the call, not copied. */
    @SaveError
    long pread(int fd, @Out @Pinned ByteBuffer dst, long count, long offset);

    /** pwrite(2) of src's remaining bytes; a heap buffer's array is pinned for the call, not copied. */
    @SaveError
    long pwrite(int fd, @In @Pinned ByteBuffer src, long count, long offset);

    /** strerror(3): the text the JDK's own I/O exceptions carry. */
    String strerror(int errno);

    /** clock_gettime(2); {@code timespec} receives {tv_sec, tv_nsec}. */
    int clock_gettime(int clockId, @Out long[] timespec);
}
