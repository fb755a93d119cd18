package org.fanstore.prep.format;

import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;

/**
 * Takes every byte and keeps none: for decoding or copying a body only for its CRC32C (verify, the pull's check)
 * and for benchmarks that must not measure a file system's write.
 */
public final class DiscardChannel implements WritableByteChannel {
    public static final DiscardChannel INSTANCE = new DiscardChannel();

    private DiscardChannel() {
    }

    @Override
    public int write(final ByteBuffer src) {
        final int n = src.remaining();
        src.position(src.limit());
        return n;
    }

    @Override
    public boolean isOpen() {
        return true;
    }

    @Override
    public void close() {
        // nothing held
    }
}
