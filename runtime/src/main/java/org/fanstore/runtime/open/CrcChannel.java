package org.fanstore.runtime.open;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.util.zip.CRC32C;

/** Passes bytes through to a channel while summing their CRC32C, so a body is checked as it is written once. */
final class CrcChannel implements WritableByteChannel {
    private final WritableByteChannel out;
    private final CRC32C crc = new CRC32C();

    CrcChannel(WritableByteChannel out) {
        this.out = out;
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        ByteBuffer view = src.duplicate();
        int n = out.write(src);
        view.limit(view.position() + n);
        crc.update(view);
        return n;
    }

    int value() {
        return (int) crc.getValue();
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
