package org.fanstore.runtime.placement;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import jnr.ffi.LastError;
import jnr.ffi.Runtime;
import org.fanstore.runtime.shm.NativeCalls;

/**
 * Positional reads and writes of one file straight from and into Java arrays. MPJ Express hands received bytes over
 * in a byte[] and takes the bytes to send in one, and a FileChannel copies every heap buffer through a temporary
 * direct buffer, so each byte landed in a pull file and each byte a holder served cost one extra copy (StubRoutines,
 * 6.7% of all CPU in the 8 MiB, 4-rank cold pass on 2 cores). Here the array is pinned for the call (jnr-ffi
 * {@code @Pinned}: JNI's critical access, no copy) and handed to pread(2)/pwrite(2); direct buffers go by address.
 *
 * <p>The descriptor is this object's own, opened beside any FileChannel on the same file, and close(2) runs only
 * after the last call in progress returned: a raw descriptor closed under a call could be handed to the next
 * open(2) and that call would then read or write some other file. After {@link #close} calls fail with
 * {@link ClosedChannelException}, as a closed FileChannel's do.
 */
public final class ArrayIo implements AutoCloseable {
    private static final int O_RDONLY = 0;
    private static final int O_RDWR = 2;
    private static final int O_CLOEXEC = 0x80000;
    private static final int EINTR = 4;

    private static final NativeCalls LIBC = NativeCalls.LIBC;

    private final Path file;
    private final int fd;
    /** Calls in progress, plus one for the owner until {@link #close}; the descriptor closes when it reaches 0. */
    private final AtomicInteger users = new AtomicInteger(1);
    private final AtomicBoolean closed = new AtomicBoolean();

    private ArrayIo(Path file, int fd) {
        this.file = file;
        this.fd = fd;
    }

    /** Opens an existing file for reading, or for reading and writing. */
    public static ArrayIo open(Path file, boolean writable) throws IOException {
        int fd = LIBC.open(file.toString(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
        if (fd < 0) {
            throw failure("cannot open " + file);
        }
        return new ArrayIo(file, fd);
    }

    /**
     * Reads into {@code dst}'s remaining bytes from {@code position} on, as FileChannel#read(ByteBuffer, long)
     * does: the bytes read (dst's position moves by as many), -1 at the end of the file.
     */
    public int read(ByteBuffer dst, long position) throws IOException {
        if (!dst.hasRemaining()) {
            return 0;
        }
        acquire();
        try {
            long n;
            do {
                n = LIBC.pread(fd, dst, dst.remaining(), position);
            } while (n < 0 && errno() == EINTR);
            if (n < 0) {
                throw failure("cannot read " + file + " at " + position);
            }
            if (n == 0) {
                return -1;
            }
            dst.position(dst.position() + (int) n);
            return (int) n;
        } finally {
            release();
        }
    }

    /** Writes all of {@code src}'s remaining bytes at {@code position}; src's position moves to its limit. */
    public int write(ByteBuffer src, long position) throws IOException {
        int total = src.remaining();
        acquire();
        try {
            long at = position;
            while (src.hasRemaining()) {
                long n = LIBC.pwrite(fd, src, src.remaining(), at);
                if (n < 0) {
                    if (errno() == EINTR) {
                        continue;
                    }
                    throw failure("cannot write " + file + " at " + at);
                }
                if (n == 0) {           // never for a regular file; a loop on it would never end
                    throw new IOException("cannot write " + file + " at " + at + ": the kernel took no bytes");
                }
                src.position(src.position() + (int) n);
                at += n;
            }
            return total;
        } finally {
            release();
        }
    }

    private void acquire() throws ClosedChannelException {
        if (closed.get()) {
            throw new ClosedChannelException();
        }
        for (;;) {
            int u = users.get();
            if (u == 0) {
                throw new ClosedChannelException();
            }
            if (users.compareAndSet(u, u + 1)) {
                return;
            }
        }
    }

    private void release() {
        if (users.decrementAndGet() == 0) {
            LIBC.close(fd);
        }
    }

    /** Idempotent; the descriptor closes once the calls in progress returned. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            release();      // the owner's reference
        }
    }

    private static int errno() {
        return LastError.getLastError(Runtime.getRuntime(LIBC));
    }

    private static IOException failure(String what) {
        int e = errno();
        // the text is strerror's, as the JDK's own exceptions carry it: DiskFull recognises ENOSPC by it
        return new IOException(what + ": " + LIBC.strerror(e));
    }
}
