package org.fanstore.runtime.stats;

import static org.fanstore.runtime.stats.ShimCountersDescriptor.COUNTER_COUNT;
import static org.fanstore.runtime.stats.ShimCountersDescriptor.COUNT_OFFSET;
import static org.fanstore.runtime.stats.ShimCountersDescriptor.FILE_BYTES;
import static org.fanstore.runtime.stats.ShimCountersDescriptor.MAGIC;
import static org.fanstore.runtime.stats.ShimCountersDescriptor.MAGIC_OFFSET;
import static org.fanstore.runtime.stats.ShimCountersDescriptor.VERSION;
import static org.fanstore.runtime.stats.ShimCountersDescriptor.VERSION_OFFSET;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The runtime's side of {@code shim.counters}: it creates the file (header, zero counters, mode 0600) before the
 * shim may attach, and reads the counters the shim's processes add to. Mapped for the runtime's life and left to
 * the garbage collector to unmap, as {@code ReferenceBits} is.
 */
public final class ShimCounters {
    private final UnsafeBuffer buffer;

    private ShimCounters(UnsafeBuffer buffer) {
        this.buffer = buffer;
    }

    /** Creates {@code path} (replacing a stale file) and maps it. */
    public static ShimCounters create(Path path) throws IOException {
        Files.deleteIfExists(path);
        try (FileChannel channel = FileChannel.open(path,
                Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            channel.write(ByteBuffer.wrap(header()), 0);
            return new ShimCounters(new UnsafeBuffer(channel.map(FileChannel.MapMode.READ_WRITE, 0, FILE_BYTES)));
        }
    }

    /** The 64 bytes a fresh file holds: magic, version, counter count, zeros. */
    static byte[] header() {
        ByteBuffer b = ByteBuffer.allocate(FILE_BYTES).order(ByteOrder.nativeOrder());
        b.put(MAGIC_OFFSET, MAGIC).putInt(VERSION_OFFSET, VERSION).putInt(COUNT_OFFSET, COUNTER_COUNT);
        return b.array();
    }

    /** Maps an existing file read-only after checking its header (tests; a second reader). */
    public static ShimCounters open(Path path) throws IOException {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            if (channel.size() != FILE_BYTES) {
                throw new IOException(path + ": " + channel.size() + " bytes, a counters file has " + FILE_BYTES);
            }
            UnsafeBuffer b = new UnsafeBuffer(channel.map(FileChannel.MapMode.READ_ONLY, 0, FILE_BYTES));
            byte[] magic = new byte[MAGIC.length];
            b.getBytes(MAGIC_OFFSET, magic);
            if (!java.util.Arrays.equals(magic, MAGIC) || b.getInt(VERSION_OFFSET) != VERSION
                    || b.getInt(COUNT_OFFSET) != COUNTER_COUNT) {
                throw new IOException(path + " is not a version " + VERSION + " counters file");
            }
            return new ShimCounters(b);
        }
    }

    /** Counter {@code counter} ({@link ShimCountersDescriptor#LOCAL_OPENS}...), as last stored by any process. */
    public long value(int counter) {
        if (counter < 0 || counter >= COUNTER_COUNT) {
            throw new IllegalArgumentException("no counter " + counter);
        }
        return buffer.getLongVolatile(ShimCountersDescriptor.counterOffset(counter));
    }
}
