package org.fanstore.prep.format;

import static org.fanstore.prep.format.PartitionDescriptor.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Reads a partition's table a buffer at a time (tables may exceed 2 GiB), computing its CRC as the bytes
 * arrive, and checks each entry's fields and body bounds. Lengths are checked before anything is allocated, so
 * a damaged table cannot make the parser allocate or read out of bounds.
 */
final class TableParser {
    private static final int BUFFER_BYTES = 1 << 20;

    private final Path file;
    private final FileChannel channel;
    private final long tableLength;
    private final long dataOffset;
    private final long fileSize;
    private final CRC32C crc = new CRC32C();
    private ByteBuffer buffer = ByteBuffer.allocate(BUFFER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private long readFromTable;

    TableParser(final Path file, final FileChannel channel, final long tableLength, final long dataOffset,
        final long fileSize) {
        this.file = file;
        this.channel = channel;
        this.tableLength = tableLength;
        this.dataOffset = dataOffset;
        this.fileSize = fileSize;
        buffer.limit(0);
    }

    List<PartitionEntry> parse(final long entryCount, final int expectedCrc) throws IOException {
        final List<PartitionEntry> entries = new ArrayList<>((int)Math.min(entryCount, 1 << 20));
        byte[] previous = null;
        for (long i = 0; i < entryCount; i++) {
            ensure(PATH_OFFSET, i);
            final int pathLength = buffer.getInt(buffer.position() + PATH_LENGTH_OFFSET);
            if (pathLength < 0 || entryLength(pathLength) > unconsumedTableBytes()) {
                throw corrupt("table entry " + i + " claims a path of " + Integer.toUnsignedString(pathLength) +
                    " bytes, more than the table holds");
            }
            ensure((int)entryLength(pathLength), i);
            final int start = buffer.position();
            final byte[] path = new byte[pathLength];
            buffer.get(start + PATH_OFFSET, path);
            final int f = start + PATH_OFFSET + pathLength;
            final PartitionEntry e = new PartitionEntry(path, buffer.get(f + TYPE_OFFSET) & 0xFF,
                buffer.get(f + CODEC_OFFSET) & 0xFF, buffer.getInt(f + MODE_OFFSET), buffer.getInt(f + UID_OFFSET),
                buffer.getInt(f + GID_OFFSET), buffer.getLong(f + MTIME_SEC_OFFSET),
                buffer.getInt(f + MTIME_NSEC_OFFSET), buffer.getLong(f + RAW_LENGTH_OFFSET),
                buffer.getLong(f + STORED_LENGTH_OFFSET), 0, buffer.getInt(f + BODY_CRC_OFFSET));
            final long relativeBody = buffer.getLong(f + BODY_OFFSET_OFFSET);
            buffer.position(f + ENTRY_FIXED_LENGTH);
            final PartitionEntry checked = check(e, relativeBody, previous);
            entries.add(checked);
            previous = path;
        }
        if (readFromTable != tableLength || buffer.hasRemaining()) {
            throw corrupt("the table has " + (tableLength - readFromTable + buffer.remaining()) +
                " bytes after its " + entryCount + " entries");
        }
        if ((int)crc.getValue() != expectedCrc) {
            throw corrupt(String.format("table CRC32C is %08x, the header says %08x",
                (int)crc.getValue(), expectedCrc));
        }
        return entries;
    }

    private PartitionEntry check(final PartitionEntry e, final long relativeBody, final byte[] previous)
        throws CorruptPartitionException {
        if (e.type() < TYPE_FILE || e.type() > TYPE_SYMLINK || (e.codec() != CODEC_RAW &&
            e.codec() != CODEC_LZ4_CHUNKED)) {
            throw new CorruptPartitionException(file, e.path(), "unknown type " + e.type() + " or codec " +
                e.codec() + " in the table");
        }
        if (previous != null && Arrays.compareUnsigned(previous, e.path()) >= 0) {
            throw new CorruptPartitionException(file, e.path(), "table is not sorted by path");
        }
        final long bodyOffset = dataOffset + relativeBody;
        if (relativeBody < 0 || e.storedLength() < 0 || e.rawLength() < 0 || bodyOffset < dataOffset ||
            e.storedLength() > fileSize - bodyOffset) {
            throw new CorruptPartitionException(file, e.path(), "body [" + bodyOffset + ", +" + e.storedLength() +
                ") lies outside the file's " + fileSize + " bytes (truncated?)");
        }
        if (e.codec() == CODEC_RAW && e.storedLength() != e.rawLength()) {
            throw new CorruptPartitionException(file, e.path(), "raw body of " + e.storedLength() +
                " bytes, table says raw length " + e.rawLength());
        }
        return e.withBody(e.codec(), e.rawLength(), e.storedLength(), bodyOffset, e.crc32c());
    }

    private long unconsumedTableBytes() {
        return tableLength - readFromTable + buffer.remaining();
    }

    private void ensure(final int bytes, final long entryIndex) throws IOException {
        if (buffer.remaining() >= bytes) {
            return;
        }
        if (unconsumedTableBytes() < bytes) {
            throw corrupt("table ends inside entry " + entryIndex);
        }
        if (buffer.capacity() < bytes) {
            final ByteBuffer bigger = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
            bigger.put(buffer);
            bigger.flip();
            buffer = bigger;
        }
        buffer.compact();
        while (buffer.position() < bytes) {
            final int want = (int)Math.min(buffer.remaining(), tableLength - readFromTable);
            final ByteBuffer slice = buffer.slice(buffer.position(), want);
            final int n = channel.read(slice, HEADER_LENGTH + readFromTable);
            if (n <= 0) {
                throw corrupt("file ends inside the table (truncated?)");
            }
            crc.update(buffer.array(), buffer.arrayOffset() + buffer.position(), n);
            buffer.position(buffer.position() + n);
            readFromTable += n;
        }
        buffer.flip();
    }

    private CorruptPartitionException corrupt(final String problem) {
        return new CorruptPartitionException(file, problem);
    }
}
