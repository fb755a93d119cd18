package org.fanstore.runtime.shm;

import java.nio.ByteBuffer;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.annotations.SaveError;

/**
 * The few libc calls the shared-memory server needs, bound once through jnr-ffi. Public only because jnr-ffi
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

    /** open(2) without O_CREAT; -1 and errno on failure. */
    @SaveError
    int open(String path, int flags);

    /** open(2) without O_CREAT, the path as NUL-terminated bytes; -1 and errno on failure. */
    @SaveError
    int open(@In byte[] path, int flags);

    /** read(2) into {@code buffer} from its position (a direct buffer); -1 and errno on failure. */
    @SaveError
    long read(int fd, @Out ByteBuffer buffer, long count);

    /** fdopendir(3): a DIR over the directory {@code fd} (owned by it from then on), or null. */
    @SaveError
    Pointer fdopendir(int fd);

    /** readdir(3): the next struct dirent, or null at the end. */
    Pointer readdir(Pointer dir);

    /** closedir(3); closes the descriptor too. */
    int closedir(Pointer dir);

    /** fallocate(2); with FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE it frees the blocks of a byte range. */
    @SaveError
    int fallocate(int fd, int mode, long offset, long length);

    /**
     * fcntl(2) with a struct flock argument (F_OFD_SETLK, F_SETLK...): {@code flock} is its 32 bytes (x86-64 and
     * aarch64: short type, short whence, pad, long start, long len, int pid, pad), native order. Variadic in C;
     * the fixed prototype is call-compatible as for {@code syscall}.
     */
    @SaveError
    int fcntl(int fd, int command, @In @Out byte[] flock);

    /** close(2). */
    int close(int fd);

    /** setpriority(2); with PRIO_PROCESS and who 0, Linux sets the calling thread's nice value only. */
    @SaveError
    int setpriority(int which, int who, int prio);

    /** clock_gettime(2); {@code timespec} receives {tv_sec, tv_nsec}. */
    int clock_gettime(int clockId, @Out long[] timespec);
}
