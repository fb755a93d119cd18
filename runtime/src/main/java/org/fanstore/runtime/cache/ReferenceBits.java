package org.fanstore.runtime.cache;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import org.agrona.concurrent.UnsafeBuffer;
import org.fanstore.runtime.layout.RankDirectory;

/**
 * The cache's reference bits, shared with the shim: the file {@code cache.ref} ({@link RankDirectory#CACHE_REF}) in
 * the rank directory, one byte per metadata-table entry (byte i belongs to entry i), then the 8-byte size from
 * which materialised files live in the node-local cache directory. Its length (entry count + 8) is the whole
 * version check: a reader that finds another length does not use it. Specification:
 * runtime/src/main/java/org/fanstore/runtime/shm/README.md ("cache.ref"); golden image:
 * {@code tests/vectors/cache/cache-ref-3.bin}.
 *
 * <p>The shim opens a materialised file straight from the cache without asking the runtime, so the runtime
 * never sees those hits; instead the shim stores 1 into the file's byte (a plain store, no system call) and the
 * eviction's CLOCK hand reads and clears it. A lost or stale bit only misjudges one file's heat once: the
 * bytes are hints, never trusted for correctness, so no ordering stronger than volatile is needed.
 *
 * <p>Mapped for the runtime's life, never unmapped by hand: a worker still evicting after shutdown would touch
 * an unmapped page and crash the JVM; the garbage collector unmaps it when nothing refers to it.
 */
public final class ReferenceBits {

    /** Bytes after the entries' bytes: the local threshold, u64 little-endian. */
    public static final int TRAILER_BYTES = 8;
    /** A threshold no file reaches: every materialised file stays in the tmpfs cache. */
    public static final long NEVER_LOCAL = -1L;

    private final UnsafeBuffer bits;
    private final int entries;
    private final long localMinBytes;

    private ReferenceBits(MappedByteBuffer mapped, int entries, long localMinBytes) {
        this.bits = new UnsafeBuffer(mapped);
        this.entries = entries;
        this.localMinBytes = localMinBytes;
    }

    /** A file for a table of {@code entries} entries whose files all stay in the tmpfs cache. */
    public static ReferenceBits create(Path path, int entries) throws IOException {
        return create(path, entries, NEVER_LOCAL);
    }

    /**
     * Creates {@code path} (mode 0600, all bits clear, replacing a stale file) for a table of {@code entries}
     * entries and maps it; readers map it read-write. Files of at least {@code localMinBytes} bytes are
     * materialised in the node-local cache directory ({@link #NEVER_LOCAL}: none); the shim reads the value here.
     */
    public static ReferenceBits create(Path path, int entries, long localMinBytes) throws IOException {
        if (entries <= 0) {
            throw new IllegalArgumentException("a table has at least one entry, got " + entries);
        }
        Files.deleteIfExists(path);
        try (FileChannel channel = FileChannel.open(path,
                Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            ByteBuffer trailer = ByteBuffer.allocate(TRAILER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            trailer.putLong(0, localMinBytes);
            channel.write(trailer, entries);  // sizes the file; the entries' bytes stay sparse zeros
            return new ReferenceBits(channel.map(FileChannel.MapMode.READ_WRITE, 0, entries), entries,
                    localMinBytes);
        }
    }

    /** Materialised files of at least this many bytes live in the node-local cache directory (unsigned). */
    public long localMinBytes() {
        return localMinBytes;
    }

    public int entries() {
        return entries;
    }

    /** Marks entry {@code id} as used since the hand last passed. */
    public void set(int id) {
        if (bits.getByteVolatile(id) == 0) {  // read first: a set bit's cache line stays clean for other readers
            bits.putByteVolatile(id, (byte) 1);
        }
    }

    /** Clears the bit of {@code id}; true when it was set. */
    public boolean testAndClear(int id) {
        if (bits.getByteVolatile(id) == 0) {
            return false;
        }
        bits.putByteVolatile(id, (byte) 0);
        return true;
    }

    public void clear(int id) {
        bits.putByteVolatile(id, (byte) 0);
    }

    public boolean isSet(int id) {
        return bits.getByteVolatile(id) != 0;
    }
}
