package org.fanstore.prep.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;

/**
 * Small sinks for {@link ObjectStore#read(String, String, long, long, WritableByteChannel)} and its tests: channels
 * that are always open and hold nothing to close, so only what a write does with the bytes differs.
 */
public final class Sinks {
    private Sinks() {
    }

    /** What a sink does with one buffer: {@link WritableByteChannel#write}, returning the bytes taken. */
    @FunctionalInterface
    public interface Write {
        int write(ByteBuffer src) throws IOException;
    }

    /** A channel that is always open and has nothing to close; subclasses say only what a write does. */
    public abstract static class Open implements WritableByteChannel {
        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
            // nothing held
        }
    }

    /** A sink whose writes are {@code write}. */
    public static WritableByteChannel of(Write write) {
        return new Open() {
            @Override
            public int write(ByteBuffer src) throws IOException {
                return write.write(src);
            }
        };
    }

    /** A sink that puts every byte into {@code dst}. */
    public static WritableByteChannel into(ByteBuffer dst) {
        return of(src -> {
            int n = src.remaining();
            dst.put(src);
            return n;
        });
    }

    /** A sink that writes on at a position of a file, from {@code position} on. */
    public static WritableByteChannel at(FileChannel file, long position) {
        long[] at = {position};
        return of(src -> {
            int n = file.write(src, at[0]);
            at[0] += n;
            return n;
        });
    }
}
