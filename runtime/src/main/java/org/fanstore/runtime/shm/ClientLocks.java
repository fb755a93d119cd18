package org.fanstore.runtime.shm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import jnr.ffi.LastError;
import jnr.ffi.Runtime;

/**
 * {@code <ctl>.clients}: whether the owner of a slot still lives, whatever its PID namespace (README, "Liveness").
 * A client holds an OFD read lock on byte &lt;slot&gt; from before its claim CAS until it has left the slot; the
 * kernel drops it when the last descriptor of the client's open file description closes, i.e. when the client
 * (and any fork child that still shares the description) has died. The sweeper asks by taking a write lock on
 * that byte itself ({@link #tryHold}), and frees the slot only while it holds it: no client can claim the slot
 * meanwhile (a claim takes the byte first), so a claim word unchanged under the lock belongs to a dead owner.
 * Empty file (locks need no bytes), mode 0600, created anew (a new inode: leftover clients of a dead runtime keep
 * their locks on the old one) before {@code ctl}. Used by the dispatcher thread only; closed by the server.
 */
final class ClientLocks implements AutoCloseable {
    static final String SUFFIX = ".clients";
    private static final int O_RDWR = 2;
    private static final int O_CLOEXEC = 0x80000;  // x86-64 and aarch64 alike
    private static final int F_SETLK = 6;
    private static final int F_OFD_SETLK = 37;
    private static final short F_WRLCK = 1;
    private static final short F_UNLCK = 2;
    private static final int FLOCK_SIZE = 32;
    private static final int EINVAL = 22;

    final Path path;
    private final int fd;
    private final byte[] flock = new byte[FLOCK_SIZE];
    private int command = F_OFD_SETLK;

    private ClientLocks(final Path path, final int fd) {
        this.path = path;
        this.fd = fd;
    }

    static Path pathFor(final Path ctlFile) {
        return ctlFile.resolveSibling(ctlFile.getFileName() + SUFFIX);
    }

    /** Creates (replacing a leftover) and opens {@code <ctl>.clients}; call with the server's lock held. */
    static ClientLocks create(final Path ctlFile) throws IOException {
        final Path path = pathFor(ctlFile);
        if (Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            Files.delete(path);
        }
        Files.createFile(path, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        final int fd = NativeCalls.LIBC.open(path.toString(), O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            throw new IOException("cannot open " + path + ": errno " + errno());
        }
        return new ClientLocks(path, fd);
    }

    /**
     * Takes the write lock on {@code slot}'s byte: true if no client holds it (then {@link #release} it), false
     * if a live client does (or the lock cannot be asked for: never free on a guess).
     */
    boolean tryHold(final int slot) {
        if (lock(slot, F_WRLCK) == 0) {
            return true;
        }
        if (command == F_OFD_SETLK && errno() == EINVAL) {  // a kernel before 3.15: the clients fall back too
            command = F_SETLK;
            return lock(slot, F_WRLCK) == 0;
        }
        return false;
    }

    void release(final int slot) {
        lock(slot, F_UNLCK);
    }

    private int lock(final int slot, final short type) {
        final ByteBuffer b = ByteBuffer.wrap(flock).order(ByteOrder.nativeOrder());
        java.util.Arrays.fill(flock, (byte)0);
        b.putShort(0, type);          // l_type
        b.putShort(2, (short)0);      // l_whence = SEEK_SET
        b.putLong(8, slot);           // l_start
        b.putLong(16, 1);             // l_len
        return NativeCalls.LIBC.fcntl(fd, command, flock);
    }

    private static int errno() {
        return LastError.getLastError(Runtime.getSystemRuntime());
    }

    @Override
    public void close() {
        NativeCalls.LIBC.close(fd);
    }
}
