package org.fanstore.prep.format;

import static org.fanstore.prep.format.PartitionDescriptor.*;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * An open, validated partition file. {@link #open} checks the header, the table CRC and that every body lies
 * inside the file before handing out a single entry; reading a body checks its CRC32C. Any failure is a
 * {@link CorruptPartitionException} naming the file (and the entry, for a body). Reads are positional, so one
 * reader may serve several threads.
 */
public final class PartitionReader implements AutoCloseable {
    private static final int STREAM_BUFFER_BYTES = 1 << 20;

    private final Path file;
    private final FileChannel channel;
    private final int index;
    private final boolean broadcast;
    private final long fileSize;
    private final long dataOffset;
    private final List<PartitionEntry> entries;

    private PartitionReader(final Path file, final FileChannel channel, final int index, final boolean broadcast,
        final long fileSize, final long dataOffset, final List<PartitionEntry> entries) {
        this.file = file;
        this.channel = channel;
        this.index = index;
        this.broadcast = broadcast;
        this.fileSize = fileSize;
        this.dataOffset = dataOffset;
        this.entries = entries;
    }

    /** Opens and validates {@code file}. */
    public static PartitionReader open(final Path file) throws IOException {
        PartitionFiles.requireRegular(file);   // a FIFO blocks the open, /dev/zero never ends: refuse both first
        final FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
        try {
            return validate(file, channel);
        } catch (final IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** What a partition's fixed header says, checked on its own (the table not read). */
    public record Header(int index, boolean broadcast, long entryCount) {
    }

    /**
     * Checks the fixed header of {@code file} (magic, version, header CRC, where the table and data lie against the
     * file's size) with one read, without reading its table: what a runtime can afford per partition on the shared
     * FS before its command starts.
     */
    public static Header checkHeader(final Path file, final FileChannel channel) throws IOException {
        final ByteBuffer header = header(file, channel, channel.size());
        return new Header(header.getInt(PARTITION_INDEX_OFFSET), (header.getInt(FLAGS_OFFSET) & FLAG_BROADCAST) != 0,
            header.getLong(ENTRY_COUNT_OFFSET));
    }

    private static PartitionReader validate(final Path file, final FileChannel channel) throws IOException {
        final long fileSize = channel.size();
        final ByteBuffer header = header(file, channel, fileSize);
        final long entryCount = header.getLong(ENTRY_COUNT_OFFSET);
        final long tableLength = header.getLong(TABLE_LENGTH_OFFSET);
        final long dataOffset = header.getLong(DATA_OFFSET_OFFSET);
        final List<PartitionEntry> entries = new TableParser(file, channel, tableLength, dataOffset, fileSize)
            .parse(entryCount, header.getInt(TABLE_CRC_OFFSET));
        return new PartitionReader(file, channel, header.getInt(PARTITION_INDEX_OFFSET),
            (header.getInt(FLAGS_OFFSET) & FLAG_BROADCAST) != 0, fileSize, dataOffset,
            Collections.unmodifiableList(entries));
    }

    private static ByteBuffer header(final Path file, final FileChannel channel, final long fileSize)
            throws IOException {
        if (fileSize < HEADER_LENGTH) {
            throw new CorruptPartitionException(file, "only " + fileSize + " bytes, shorter than the " +
                HEADER_LENGTH + "-byte header (truncated?)");
        }
        final ByteBuffer header = ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        Lz4Chunked.readFully(channel, header, 0);
        validateHeader(file, header, fileSize);
        return header;
    }

    /**
     * Checks a partition's fixed header read from elsewhere (the first {@code HEADER_LENGTH} bytes of an object in a
     * store, {@code name} naming it in messages) against the object's size, as {@link #checkHeader(Path,
     * FileChannel)} does for a file.
     */
    public static Header checkHeader(final Path name, final byte[] first, final long size) throws IOException {
        if (size < HEADER_LENGTH || first.length < HEADER_LENGTH) {
            throw new CorruptPartitionException(name, "only " + Math.min(size, first.length) + " bytes, shorter than"
                + " the " + HEADER_LENGTH + "-byte header (truncated?)");
        }
        final ByteBuffer header = ByteBuffer.wrap(first, 0, HEADER_LENGTH).slice().order(ByteOrder.LITTLE_ENDIAN);
        validateHeader(name, header, size);
        return new Header(header.getInt(PARTITION_INDEX_OFFSET), (header.getInt(FLAGS_OFFSET) & FLAG_BROADCAST) != 0,
            header.getLong(ENTRY_COUNT_OFFSET));
    }

    private static void validateHeader(final Path file, final ByteBuffer header, final long fileSize)
            throws IOException {
        final byte[] magic = Arrays.copyOfRange(header.array(), MAGIC_OFFSET, MAGIC_OFFSET + MAGIC.length);
        if (!Arrays.equals(magic, MAGIC)) {
            throw new CorruptPartitionException(file, "not a fanstore partition (bad magic)");
        }
        final int version = header.getInt(VERSION_OFFSET);
        if (version != FORMAT_VERSION) {
            throw new CorruptPartitionException(file, String.format("format version 0x%x, this fanstore reads " +
                "0x%x: re-run fanstore prep with this version", version, FORMAT_VERSION));
        }
        final CRC32C headerCrc = new CRC32C();
        headerCrc.update(header.array(), 0, HEADER_CRC_OFFSET);
        if ((int)headerCrc.getValue() != header.getInt(HEADER_CRC_OFFSET)) {
            throw new CorruptPartitionException(file, "header CRC32C mismatch");
        }
        final long entryCount = header.getLong(ENTRY_COUNT_OFFSET);
        final long tableOffset = header.getLong(TABLE_OFFSET_OFFSET);
        final long tableLength = header.getLong(TABLE_LENGTH_OFFSET);
        final long dataOffset = header.getLong(DATA_OFFSET_OFFSET);
        if (header.getInt(HEADER_SIZE_OFFSET) != HEADER_LENGTH || tableOffset != HEADER_LENGTH ||
            tableLength < 0 || entryCount < 0 || tableLength > fileSize - HEADER_LENGTH ||
            dataOffset != PartitionDescriptor.dataOffset(tableLength)) {
            throw new CorruptPartitionException(file, "inconsistent header (table at " + tableOffset + ", " +
                tableLength + " bytes, data at " + dataOffset + ")");
        }
        if (dataOffset > fileSize) {
            throw new CorruptPartitionException(file, "data area starts at byte " + dataOffset +
                " but the file has " + fileSize + " bytes (truncated?)");
        }
    }

    public Path file() {
        return file;
    }

    /** The partition's index within its kind (regular or broadcast), from the header. */
    public int index() {
        return index;
    }

    public boolean isBroadcast() {
        return broadcast;
    }

    public long fileSize() {
        return fileSize;
    }

    /** The entries in table order (sorted by unsigned path bytes). */
    public List<PartitionEntry> entries() {
        return entries;
    }

    /** Absolute file offset of the data area. */
    public long dataOffset() {
        return dataOffset;
    }

    /** The stored body bytes (compressed when codec is 1), unchecked. */
    public byte[] readStored(final PartitionEntry e) throws IOException {
        if (e.storedLength() > Integer.MAX_VALUE - 8) {
            throw new IOException(file + ": " + e.pathString() + ": " + e.storedLength() +
                " stored bytes do not fit in memory; use copyRaw");
        }
        final ByteBuffer body = ByteBuffer.allocate((int)e.storedLength());
        try {
            Lz4Chunked.readFully(channel, body, e.bodyOffset());
        } catch (final EOFException eof) {
            throw new CorruptPartitionException(file, e.path(), eof.getMessage());
        }
        return body.array();
    }

    /** The raw bytes of a file (decompressed, CRC-checked) or a symlink's target. */
    public byte[] readRaw(final PartitionEntry e) throws IOException {
        final byte[] stored = readStored(e);
        final byte[] raw;
        if (e.codec() == CODEC_LZ4_CHUNKED) {
            try {
                raw = Lz4Chunked.decode(stored, e.rawLength());
            } catch (final IOException bad) {
                throw new CorruptPartitionException(file, e.path(), bad.getMessage());
            }
        } else {
            raw = stored;
        }
        final CRC32C crc = new CRC32C();
        crc.update(raw);
        checkCrc(e, (int)crc.getValue());
        return raw;
    }

    /**
     * Streams the raw bytes to {@code out} a chunk at a time, for bodies of any size. The CRC is known only at
     * the end: on a mismatch {@code out} has received the bad bytes and this throws.
     */
    public void copyRaw(final PartitionEntry e, final WritableByteChannel out) throws IOException {
        final CRC32C crc = new CRC32C();
        try {
            if (e.codec() == CODEC_LZ4_CHUNKED) {
                Lz4Chunked.decodeTo(channel, e.bodyOffset(), e.storedLength(), e.rawLength(), out, crc);
            } else {
                copyStored(e, out, crc);
            }
        } catch (final CorruptPartitionException c) {
            throw c;
        } catch (final EOFException | IllegalArgumentException bad) {
            throw new CorruptPartitionException(file, e.path(), bad.getMessage());
        } catch (final IOException bad) {
            if (bad.getMessage() != null && bad.getMessage().startsWith("LZ4")) {
                throw new CorruptPartitionException(file, e.path(), bad.getMessage());
            }
            throw bad;
        }
        checkCrc(e, (int)crc.getValue());
    }

    private void copyStored(final PartitionEntry e, final WritableByteChannel out, final CRC32C crc)
        throws IOException {
        final byte[] bytes = new byte[(int)Math.min(STREAM_BUFFER_BYTES, Math.max(1, e.storedLength()))];
        long done = 0;
        while (done < e.storedLength()) {
            final int n = (int)Math.min(bytes.length, e.storedLength() - done);
            final ByteBuffer chunk = ByteBuffer.wrap(bytes, 0, n);
            Lz4Chunked.readFully(channel, chunk, e.bodyOffset() + done);
            crc.update(bytes, 0, n);
            chunk.flip();
            while (chunk.hasRemaining()) {
                out.write(chunk);
            }
            done += n;
        }
    }

    private void checkCrc(final PartitionEntry e, final int actual) throws CorruptPartitionException {
        if (actual != e.crc32c()) {
            throw new CorruptPartitionException(file, e.path(), String.format(
                "CRC32C of the raw bytes is %08x, the table says %08x", actual, e.crc32c()));
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
