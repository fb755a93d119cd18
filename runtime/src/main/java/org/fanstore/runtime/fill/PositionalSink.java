package org.fanstore.runtime.fill;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * Writes what a fetch or a decoder streams at consecutive positions of a file (a pull file's range, an entry's
 * place in a decoded copy), optionally summing CRC32C on the way, and keeps the first write failure apart from the
 * source's own errors. Two ways to fail: {@link #throwing} stops the writer at once (a local decode), while
 * {@link #draining} takes and drops the rest (a reply being received: throwing mid-reply would leave the holder's
 * worker blocked on a send nobody receives until its timeout, delaying readers on every rank it serves).
 * Public for the bench, which measures the decoded copy's writes with this same sink.
 */
public final class PositionalSink implements WritableByteChannel {
    private final FileChannel out;
    /** Named in a write failure's message; null: the failure as the JDK reports it. */
    private final Path file;
    private final CRC32C crc;
    private final boolean drain;
    private long at;
    private long written;
    private IOException failure;

    private PositionalSink(FileChannel out, Path file, long position, CRC32C crc, boolean drain) {
        this.out = out;
        this.file = file;
        this.at = position;
        this.crc = crc;
        this.drain = drain;
    }

    /** Fails the writer's call at the first write failure; sums every byte into {@code crc} unless null. */
    public static PositionalSink throwing(FileChannel out, long position, CRC32C crc) {
        return new PositionalSink(out, null, position, crc, false);
    }

    /**
     * Takes every byte even after a write failure, which {@link #rethrow} reports once the stream ended, naming
     * {@code file} and the offset ("cannot write FILE at OFFSET: REASON"; a full disk keeps strerror's text for
     * DiskFull).
     */
    static PositionalSink draining(FileChannel out, Path file, long position) {
        return new PositionalSink(out, file, position, null, true);
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        int n = src.remaining();
        if (crc != null) {
            crc.update(src.duplicate());
        }
        try {
            while (failure == null && src.hasRemaining()) {
                at += out.write(src, at);
            }
        } catch (IOException e) {
            failure = file == null || e instanceof ClosedChannelException ? e
                    : new IOException("cannot write " + file + " at " + at + ": " + e.getMessage(), e);
            if (!drain) {
                throw e;
            }
        }
        src.position(src.limit());
        written += n;
        return n;
    }

    /** The first write failure, or null. */
    public IOException failure() {
        return failure;
    }

    void rethrow() throws IOException {
        if (failure != null) {
            throw failure;
        }
    }

    /** Bytes taken so far. */
    public long written() {
        return written;
    }

    @Override
    public boolean isOpen() {
        return true;
    }

    @Override
    public void close() {
    }
}
