package org.fanstore.runtime.open;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;

/**
 * Passes writes through while noting when the first one came and how long all of them took: the first write of a
 * fetch is the first reply message's data, so the gap from the request to it is the fetch's first-byte latency
 * (see RemoteStage). Two clock reads per write, against writes of up to 508 KiB.
 */
final class TimedChannel implements WritableByteChannel {
    private final WritableByteChannel out;
    private long firstWrite;
    private long writing;

    TimedChannel(WritableByteChannel out) {
        this.out = out;
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        long start = System.nanoTime();
        if (firstWrite == 0) {
            firstWrite = start;
        }
        int n = out.write(src);
        writing += System.nanoTime() - start;
        return n;
    }

    /** {@link System#nanoTime()} of the first write, or 0 if none came. */
    long firstWrite() {
        return firstWrite;
    }

    /** Nanoseconds spent in the underlying writes. */
    long writing() {
        return writing;
    }

    @Override
    public boolean isOpen() {
        return out.isOpen();
    }

    @Override
    public void close() {
        // The caller owns the underlying channel.
    }
}
