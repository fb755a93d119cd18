package org.fanstore.runtime.output;

import static org.fanstore.runtime.output.OutputJournalDescriptor.*;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Writes the output journal: a fixed-size shared-memory file of append-only records that the shim on this node
 * replays into its view of the output namespace. A record is written in full, then the published end moves past
 * it with a release store, so a reader that loads the end with acquire sees whole records only. One writer
 * (callers serialise); the file is sized once (sparse: tmpfs allocates only the pages written).
 */
public final class OutputJournal implements AutoCloseable {
    private final Path path;
    private final MappedByteBuffer mapped;
    private final UnsafeBuffer buffer;
    private final long capacity;
    private long end = HEADER_LENGTH;

    private OutputJournal(final Path path, final MappedByteBuffer mapped, final long capacity) {
        this.path = path;
        this.mapped = mapped;
        this.buffer = new UnsafeBuffer(mapped);
        this.capacity = capacity;
    }

    /** Creates the file (0600, must not exist) with room for {@code capacity} bytes including the header. */
    public static OutputJournal create(final Path path, final int rank, final Path upperDir, final int capacity)
        throws IOException {
        final byte[] upper = upperDir.toAbsolutePath().toString().getBytes(StandardCharsets.UTF_8);
        if (upper.length + 1 > HEADER_LENGTH - UPPER_PATH_OFFSET) {
            throw new IOException("upper directory path too long for the output journal: " + upperDir);
        }
        if (capacity < HEADER_LENGTH * 2) {
            throw new IllegalArgumentException("journal capacity too small: " + capacity);
        }
        Files.createFile(path, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        final MappedByteBuffer mapped;
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.truncate(capacity);
            ch.write(java.nio.ByteBuffer.wrap(new byte[1]), capacity - 1);
            mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, capacity);
        }
        final OutputJournal j = new OutputJournal(path, mapped, capacity);
        final UnsafeBuffer b = j.buffer;
        b.putBytes(MAGIC_OFFSET, MAGIC.getBytes(StandardCharsets.US_ASCII));
        b.putInt(RANK_OFFSET, rank);
        b.putLong(CAPACITY_OFFSET, capacity);
        b.putLong(PUBLISHED_OFFSET, HEADER_LENGTH);
        b.putInt(UPPER_LENGTH_OFFSET, upper.length);
        b.putBytes(UPPER_PATH_OFFSET, upper);
        b.putIntRelease(VERSION_OFFSET, VERSION);
        return j;
    }

    public Path path() {
        return path;
    }

    /** Whether a record with these name lengths still fits. */
    public boolean fits(final int keyLength, final int targetLength) {
        return end + recordLength(keyLength, targetLength) <= capacity;
    }

    /** Appends and publishes one record; false (nothing written) when the journal is full. */
    public boolean append(final OutputRecord r) {
        final int length = recordLength(r.key().length, r.target().length);
        if (r.key().length > 0xFFFF || r.target().length > 0xFFFF || end + length > capacity) {
            return false;
        }
        final int at = (int)end;
        buffer.setMemory(at, length, (byte)0);
        buffer.putInt(at + RECORD_LENGTH_OFFSET, length);
        buffer.putShort(at + RECORD_KIND_OFFSET, (short)r.kind().code());
        buffer.putShort(at + RECORD_KEY_LENGTH_OFFSET, (short)r.key().length);
        buffer.putShort(at + RECORD_TARGET_LENGTH_OFFSET, (short)r.target().length);
        buffer.putInt(at + RECORD_MODE_OFFSET, r.mode());
        buffer.putLong(at + RECORD_SIZE_OFFSET, r.size());
        buffer.putLong(at + RECORD_MTIME_OFFSET, r.mtimeNanos());
        buffer.putInt(at + RECORD_HOLDER_OFFSET, r.holderRank());
        buffer.putLong(at + RECORD_OBJECT_ID_OFFSET, r.objectId());
        buffer.putBytes(at + RECORD_KEY_OFFSET, r.key());
        buffer.putBytes(at + RECORD_KEY_OFFSET + r.key().length, r.target());
        end += length;
        buffer.putLongRelease(PUBLISHED_OFFSET, end);
        return true;
    }

    @Override
    public void close() {
        IoUtil.unmap(mapped);
    }
}
