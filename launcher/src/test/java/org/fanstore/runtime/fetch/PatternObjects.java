package org.fanstore.runtime.fetch;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.fanstore.prep.store.Sinks;

/**
 * Test objects whose bytes are a pure function of (id, position), so any rank can produce or check any
 * range of any object without storing it. Rank r owns ids {@code r * 1000 + k} for each size index k.
 */
public final class PatternObjects implements FetchSource {
    static final long[] SIZES = {0, 1, 128 << 10, 2 << 20, (8 << 20) + 3, (9 << 20) + 5};

    private final int rank;

    public PatternObjects(int rank) {
        this.rank = rank;
    }

    static long id(int owner, int sizeIndex) {
        return owner * 1000L + sizeIndex;
    }

    static byte at(long id, long position) {
        long z = (id * 0x9E3779B97F4A7C15L) ^ (position >>> 3) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 31)) * 0x94D049BB133111EBL;
        z ^= z >>> 29;
        return (byte) (z >>> ((position & 7) * 8));
    }

    @Override
    public long length(long id) {
        int k = (int) (id % 1000);
        return id / 1000 == rank && k < SIZES.length ? SIZES[k] : NOT_HELD;
    }

    @Override
    public void read(long id, long position, ByteBuffer dst) throws IOException {
        long p = position;
        while (dst.hasRemaining()) {
            dst.put(at(id, p++));
        }
    }

    /** A sink that checks each byte against the pattern as it arrives and counts them. */
    static final class CheckingSink extends Sinks.Open {
        private final long id;
        private long position;

        CheckingSink(long id, long start) {
            this.id = id;
            this.position = start;
        }

        long position() {
            return position;
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            int n = src.remaining();
            while (src.hasRemaining()) {
                byte b = src.get();
                if (b != at(id, position)) {
                    throw new IOException("object " + id + " differs at byte " + position);
                }
                position++;
            }
            return n;
        }
    }
}
