package org.fanstore.prep.format;

import static org.fanstore.prep.format.PartitionDescriptor.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Writes one partition file. The caller declares the entry count and table length up front (both follow from
 * the paths alone), so the data offset is known before the first body: bodies are written in table order
 * straight to their final place, and the table and header are written last, at the start of the file.
 * <p>
 * The whole-file CRC32C is assembled from the CRCs of header, table, padding and data, so nothing is read back.
 * A streamed body's CRC comes from the caller, which has it anyway (for a raw body it is the raw CRC), so the
 * bytes of a large file are checksummed once. Long runs of zeros in streamed bodies become holes, so sparse
 * inputs stay sparse. Not thread-safe.
 */
public final class PartitionWriter implements AutoCloseable {
    /** What the manifest needs to know about a finished partition. */
    /** A finished partition: its size, whole-file CRC32C, entry count and table (entries as a reader parses them). */
    public record Written(long fileBytes, int crc32c, long entries, List<PartitionEntry> table) {
    }

    private static final int BUFFER_BYTES = 1 << 20;

    private final Path file;
    private final FileChannel channel;
    private final int index;
    private final boolean broadcast;
    private final long declaredEntries;
    private final long declaredTableLength;
    private final long dataOffset;
    private final List<PartitionEntry> entries = new ArrayList<>();
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_BYTES);
    private final CRC32C segmentCrc = new CRC32C();

    /** File position of the first byte not yet handed to the channel (the buffer holds what follows). */
    private long flushedPosition;
    private int dataCrc;
    private long dataCrcLength;
    private long segmentLength;
    private long streamStart = -1;
    private byte[] previousPath;
    private boolean finished;

    private PartitionWriter(final Path file, final FileChannel channel, final int index, final boolean broadcast,
        final long entryCount, final long tableLength) {
        this.file = file;
        this.channel = channel;
        this.index = index;
        this.broadcast = broadcast;
        this.declaredEntries = entryCount;
        this.declaredTableLength = tableLength;
        this.dataOffset = PartitionDescriptor.dataOffset(tableLength);
        this.flushedPosition = dataOffset;
    }

    /** Creates {@code file} (which must not exist) for {@code entryCount} entries whose table is that long. */
    public static PartitionWriter create(final Path file, final int index, final boolean broadcast,
        final long entryCount, final long tableLength) throws IOException {
        final FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
            StandardOpenOption.READ);
        return new PartitionWriter(file, channel, index, broadcast, entryCount, tableLength);
    }

    public Path file() {
        return file;
    }

    /** Adds a directory entry (no body). */
    public void addDirectory(final PartitionEntry entry) {
        checkOrder(entry);
        entries.add(entry.withBody(CODEC_RAW, 0, 0, 0, 0));
    }

    /** Adds an entry whose whole stored body is {@code stored[0, storedLength)}. */
    public void addBody(final PartitionEntry entry, final int codec, final long rawLength, final int rawCrc,
        final byte[] stored, final int storedLength) throws IOException {
        checkOrder(entry);
        final long bodyOffset = position() - dataOffset;
        writeSegment(stored, 0, storedLength);
        entries.add(entry.withBody(codec, rawLength, storedLength, bodyOffset, rawCrc));
    }

    /** Starts a body that arrives in pieces ({@link #appendStream}, {@link #appendZeros}). */
    public void beginStream() {
        if (streamStart >= 0) {
            throw new IllegalStateException("a streamed body is already open");
        }
        foldSegment();
        streamStart = position();
    }

    /** Appends stored bytes to the open streamed body. */
    public void appendStream(final byte[] bytes, final int offset, final int length) throws IOException {
        put(bytes, offset, length);
    }

    /**
     * Appends the remaining bytes of {@code bytes} (a direct buffer, typically a chunk just read from the source)
     * to the open streamed body. They go straight to the file: copying them through the write buffer, or
     * letting the JDK copy a heap buffer into a temporary direct one, would cost a pass over the data each.
     */
    public void appendStream(final ByteBuffer bytes) throws IOException {
        flush();
        while (bytes.hasRemaining()) {
            flushedPosition += channel.write(bytes, flushedPosition);
        }
    }

    /** Appends {@code count} zero bytes to the open streamed body as a hole. */
    public void appendZeros(final long count) throws IOException {
        flush();
        flushedPosition += count;
    }

    /** Forgets what the open streamed body wrote (e.g. compression did not pay off); the body starts over. */
    public void restartStream() throws IOException {
        if (streamStart >= flushedPosition) {
            buffer.position((int)(streamStart - flushedPosition));
        } else {
            // Holes appended later must read as zeros, not as the discarded bytes.
            buffer.clear();
            flushedPosition = streamStart;
            channel.truncate(streamStart);
        }
    }

    /**
     * Closes the streamed body and adds its entry. {@code storedCrc} is the CRC32C of the stored bytes as
     * appended (zeros included); for {@code CODEC_RAW} it equals {@code rawCrc}.
     */
    public void endStream(final PartitionEntry entry, final int codec, final long rawLength, final int rawCrc,
        final int storedCrc) {
        checkOrder(entry);
        final long storedLength = position() - streamStart;
        dataCrc = Crc32c.combine(dataCrc, storedCrc, storedLength);
        dataCrcLength += storedLength;
        entries.add(entry.withBody(codec, rawLength, storedLength, streamStart - dataOffset, rawCrc));
        streamStart = -1;
    }

    /**
     * Writes table and header and returns the partition's size and whole-file CRC32C. It does not sync: the
     * caller syncs (see {@link #sync}), possibly on another thread while it writes the next partition.
     */
    public Written finish() throws IOException {
        if (streamStart >= 0) {
            throw new IllegalStateException("finish() with a streamed body still open");
        }
        if (entries.size() != declaredEntries) {
            throw new IllegalStateException(file + ": declared " + declaredEntries + " entries, added " +
                entries.size());
        }
        flush();
        foldSegment();
        final long end = flushedPosition;
        channel.truncate(end);
        if (channel.size() < end) {
            channel.write(ByteBuffer.allocate(1), end - 1);
        }

        final int tableCrc = writeTable();
        final ByteBuffer header = header(tableCrc);
        final CRC32C crc = new CRC32C();
        crc.update(header.duplicate());
        while (header.hasRemaining()) {
            channel.write(header, header.position());
        }
        finished = true;

        final long padding = dataOffset - HEADER_LENGTH - declaredTableLength;
        final CRC32C paddingCrc = new CRC32C();
        paddingCrc.update(new byte[(int)padding]);
        int whole = Crc32c.combine((int)crc.getValue(), tableCrc, declaredTableLength);
        whole = Crc32c.combine(whole, (int)paddingCrc.getValue(), padding);
        whole = Crc32c.combine(whole, dataCrc, dataCrcLength);
        // as a reader parses them: body offsets from the start of the file, not of the data area
        final List<PartitionEntry> table = new ArrayList<>(entries.size());
        for (final PartitionEntry e : entries) {
            table.add(e.withBody(e.codec(), e.rawLength(), e.storedLength(), dataOffset + e.bodyOffset(), e.crc32c()));
        }
        return new Written(end, whole, entries.size(), table);
    }

    /** Forces a written partition file to stable storage (fsync applies to the file, whichever descriptor). */
    public static void sync(final Path file) throws IOException {
        try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
            c.force(true);
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
        if (!finished) {
            entries.clear();
        }
    }

    private int writeTable() throws IOException {
        buffer.clear();
        final CRC32C crc = new CRC32C();
        long position = HEADER_LENGTH;
        ByteBuffer entryBuffer = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        for (final PartitionEntry e : entries) {
            final long length = entryLength(e.path().length);
            if (entryBuffer.capacity() < length) {
                entryBuffer = ByteBuffer.allocate((int)length).order(ByteOrder.LITTLE_ENDIAN);
            }
            entryBuffer.clear();
            encode(e, entryBuffer);
            entryBuffer.flip();
            crc.update(entryBuffer.duplicate());
            if (buffer.remaining() < entryBuffer.remaining()) {
                position = drain(position);
            }
            if (buffer.remaining() < entryBuffer.remaining()) {
                while (entryBuffer.hasRemaining()) {
                    position += channel.write(entryBuffer, position);
                }
            } else {
                buffer.put(entryBuffer);
            }
        }
        position = drain(position);
        if (position != HEADER_LENGTH + declaredTableLength) {
            throw new IllegalStateException(file + ": declared a table of " + declaredTableLength + " bytes, wrote " +
                (position - HEADER_LENGTH));
        }
        return (int)crc.getValue();
    }

    private long drain(final long position) throws IOException {
        long at = position;
        buffer.flip();
        while (buffer.hasRemaining()) {
            at += channel.write(buffer, at);
        }
        buffer.clear();
        return at;
    }

    private static void encode(final PartitionEntry e, final ByteBuffer out) {
        final int start = out.position();
        out.putInt(start + PATH_LENGTH_OFFSET, e.path().length);
        out.put(start + PATH_OFFSET, e.path());
        final int fixed = start + PATH_OFFSET + e.path().length;
        out.put(fixed + TYPE_OFFSET, (byte)e.type());
        out.put(fixed + CODEC_OFFSET, (byte)e.codec());
        out.putShort(fixed + RESERVED_OFFSET, (short)0);
        out.putInt(fixed + MODE_OFFSET, e.mode());
        out.putInt(fixed + UID_OFFSET, e.uid());
        out.putInt(fixed + GID_OFFSET, e.gid());
        out.putLong(fixed + MTIME_SEC_OFFSET, e.mtimeSec());
        out.putInt(fixed + MTIME_NSEC_OFFSET, e.mtimeNsec());
        out.putLong(fixed + RAW_LENGTH_OFFSET, e.rawLength());
        out.putLong(fixed + STORED_LENGTH_OFFSET, e.storedLength());
        out.putLong(fixed + BODY_OFFSET_OFFSET, e.bodyOffset());
        out.putInt(fixed + BODY_CRC_OFFSET, e.crc32c());
        out.position(fixed + ENTRY_FIXED_LENGTH);
    }

    private ByteBuffer header(final int tableCrc) {
        final ByteBuffer h = ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        h.put(MAGIC_OFFSET, MAGIC);
        h.putInt(VERSION_OFFSET, FORMAT_VERSION);
        h.putInt(HEADER_SIZE_OFFSET, HEADER_LENGTH);
        h.putInt(PARTITION_INDEX_OFFSET, index);
        h.putInt(FLAGS_OFFSET, broadcast ? FLAG_BROADCAST : 0);
        h.putLong(ENTRY_COUNT_OFFSET, entries.size());
        h.putLong(TABLE_OFFSET_OFFSET, HEADER_LENGTH);
        h.putLong(TABLE_LENGTH_OFFSET, declaredTableLength);
        h.putLong(DATA_OFFSET_OFFSET, dataOffset);
        h.putInt(TABLE_CRC_OFFSET, tableCrc);
        final CRC32C crc = new CRC32C();
        crc.update(h.array(), 0, HEADER_CRC_OFFSET);
        h.putInt(HEADER_CRC_OFFSET, (int)crc.getValue());
        return h;
    }

    private void checkOrder(final PartitionEntry entry) {
        if (previousPath != null && Arrays.compareUnsigned(previousPath, entry.path()) >= 0) {
            throw new IllegalStateException(file + ": entries must come in increasing path order, " +
                entry.pathString() + " came after " + PathBytes.display(previousPath));
        }
        previousPath = entry.path();
    }

    private long position() {
        return flushedPosition + buffer.position();
    }

    private void writeSegment(final byte[] bytes, final int offset, final int length) throws IOException {
        put(bytes, offset, length);
        segmentCrc.update(bytes, offset, length);
        segmentLength += length;
    }

    private void foldSegment() {
        dataCrc = Crc32c.combine(dataCrc, (int)segmentCrc.getValue(), segmentLength);
        dataCrcLength += segmentLength;
        segmentCrc.reset();
        segmentLength = 0;
    }

    private void put(final byte[] bytes, final int offset, final int length) throws IOException {
        if (length > buffer.remaining()) {
            flush();
        }
        if (length > buffer.remaining()) {
            final ByteBuffer direct = ByteBuffer.wrap(bytes, offset, length);
            while (direct.hasRemaining()) {
                flushedPosition += channel.write(direct, flushedPosition);
            }
            return;
        }
        buffer.put(bytes, offset, length);
    }

    private void flush() throws IOException {
        buffer.flip();
        while (buffer.hasRemaining()) {
            flushedPosition += channel.write(buffer, flushedPosition);
        }
        buffer.clear();
    }
}
