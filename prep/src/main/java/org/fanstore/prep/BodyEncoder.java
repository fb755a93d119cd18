package org.fanstore.prep;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.util.zip.CRC32C;

import org.fanstore.prep.format.Compression;
import org.fanstore.prep.format.Lz4Chunked;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionWriter;

/**
 * Turns a source file into a stored body. Small files are read whole by a worker thread ({@link #encode});
 * larger ones are streamed by the writer a chunk at a time ({@link #stream}), so a file of any size needs only
 * a few MiB of memory. Where "small" ends depends on the work per byte ({@link #readsWhole}): compressing pays
 * for reading ahead on several threads up to {@link #IN_MEMORY_LIMIT}; copying raw bytes does not, because a
 * body read ahead has left the CPU caches by the time it is written, and the write then runs at memory speed
 * (more CPU time than the same bytes streamed in 1 MiB chunks, the more so the larger the body).
 * Compression is kept only when it saves at least 1/21 of the bytes (ratio 1.05): below that, the
 * decompression cost on every read buys too little.
 */
final class BodyEncoder {
    /** Larger files are streamed instead of being held in memory. */
    static final long IN_MEMORY_LIMIT = 32L << 20;
    /** Without compression, larger files are streamed: read, checksummed and written while cache-hot. */
    static final long RAW_IN_MEMORY_LIMIT = 64L << 10;

    private static final int STREAM_CHUNK = PartitionDescriptor.LZ4_CHUNK_RAW_LENGTH;
    /** Small enough to stay in the CPU caches between the read and the write of a raw chunk. */
    private static final int RAW_STREAM_CHUNK = 1 << 20;
    /** Compared against to turn all-zero chunks of uncompressed big files into holes. */
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(RAW_STREAM_CHUNK).asReadOnlyBuffer();

    /** A file's stored body, ready to append to a partition. */
    record EncodedBody(int codec, long rawLength, int rawCrc, byte[] stored, int storedLength) {
    }

    /** What a streamed body came to. */
    record Streamed(long rawLength, long storedLength) {
    }

    private final Lz4Chunked.Encoder encoder;
    private final BufferPool buffers = new BufferPool();
    /** The raw stream's chunk, direct so reads and writes need no JDK copy; only the writer thread streams. */
    private ByteBuffer rawChunk;

    private final SourceFiles files;

    BodyEncoder(final Compression compression, final SourceFiles files) {
        this.encoder = compression == Compression.NONE ? null : Lz4Chunked.encoder(compression);
        this.files = files;
    }

    /** Whether a file of {@code size} bytes is read whole by a worker ({@link #encode}) or streamed. */
    boolean readsWhole(final long size) {
        return size <= (encoder == null && !files.remote() ? RAW_IN_MEMORY_LIMIT : IN_MEMORY_LIMIT);
    }

    /** Hands a written body's array back for reuse. */
    void recycle(final EncodedBody body) {
        buffers.give(body.stored());
    }

    static boolean worthKeeping(final long rawLength, final long encodedLength) {
        // The metadata table (format 3) holds a compressed body's stored length in a u32: larger ones stay raw.
        return encodedLength * 21 <= rawLength * 20 && encodedLength < (1L << 32);
    }

    /**
     * Reads a small file of {@code size} bytes (the walk's lstat size) whole and encodes it. The walk's size is
     * trusted rather than asked for again: an fstat per file is a syscall per file, and the table's size and
     * mtime then come from the same lstat. A file that shrank since the walk is packed as it is now; one that
     * grew, up to the walk's size.
     */
    EncodedBody encode(final SourceEntry source, final long size) throws IOException {
        if (size > IN_MEMORY_LIMIT) {
            throw new IllegalArgumentException(files.describe(source) + ": " + size + " bytes is too large to read " +
                "whole");
        }
        final byte[] raw;
        final int length;
        try (ReadableByteChannel in = files.open(source)) {
            raw = buffers.take((int)size);
            final ByteBuffer buffer = ByteBuffer.wrap(raw, 0, (int)size);
            int n;
            do {
                n = in.read(buffer);
            } while (n >= 0 && buffer.hasRemaining());
            length = buffer.position();
        }
        final CRC32C crc = new CRC32C();
        crc.update(raw, 0, length);
        if (encoder != null && length > 0) {
            final byte[] encoded = buffers.take((int)encoder.maxEncodedLength(length));
            final int encodedLength = encoder.encode(raw, 0, length, encoded, 0);
            if (worthKeeping(length, encodedLength)) {
                buffers.give(raw);
                return new EncodedBody(PartitionDescriptor.CODEC_LZ4_CHUNKED, length, (int)crc.getValue(), encoded,
                    encodedLength);
            }
            buffers.give(encoded);
        }
        return new EncodedBody(PartitionDescriptor.CODEC_RAW, length, (int)crc.getValue(), raw, length);
    }

    /** Streams a large file into {@code writer} as the body of {@code entry}. Writer thread only. */
    Streamed stream(final SourceEntry source, final PartitionWriter writer, final PartitionEntry entry)
        throws IOException {
        writer.beginStream();
        if (encoder != null) {
            final byte[] raw = new byte[STREAM_CHUNK];
            final byte[] encoded = new byte[encoder.maxChunkLength()];
            final CRC32C crc = new CRC32C();
            final CRC32C storedCrc = new CRC32C();
            long rawLength = 0;
            long storedLength = 0;
            try (ReadableByteChannel in = files.open(source)) {
                for (int n; (n = readChunk(in, raw)) > 0; ) {
                    crc.update(raw, 0, n);
                    final int e = encoder.encodeChunk(raw, 0, n, encoded, 0);
                    writer.appendStream(encoded, 0, e);
                    storedCrc.update(encoded, 0, e);
                    rawLength += n;
                    storedLength += e;
                }
            }
            if (rawLength > 0 && worthKeeping(rawLength, storedLength)) {
                writer.endStream(entry, PartitionDescriptor.CODEC_LZ4_CHUNKED, rawLength, (int)crc.getValue(),
                    (int)storedCrc.getValue());
                return new Streamed(rawLength, storedLength);
            }
            writer.restartStream();
        }
        return streamRaw(source, writer, entry);
    }

    /** The raw body: one CRC pass per chunk, which is also the stored bytes' CRC. */
    private Streamed streamRaw(final SourceEntry source, final PartitionWriter writer, final PartitionEntry entry)
        throws IOException {
        if (rawChunk == null) {
            rawChunk = ByteBuffer.allocateDirect(RAW_STREAM_CHUNK);
        }
        final ByteBuffer chunk = rawChunk;
        final CRC32C crc = new CRC32C();
        long rawLength = 0;
        try (ReadableByteChannel in = files.open(source)) {
            for (int n; (n = readChunk(in, chunk.clear())) > 0; ) {
                chunk.flip();
                crc.update(chunk.duplicate());
                if (chunk.mismatch(ZEROS.duplicate().limit(n)) < 0) {
                    writer.appendZeros(n);
                } else {
                    writer.appendStream(chunk);
                }
                rawLength += n;
            }
        }
        final int rawCrc = (int)crc.getValue();
        writer.endStream(entry, PartitionDescriptor.CODEC_RAW, rawLength, rawCrc, rawCrc);
        return new Streamed(rawLength, rawLength);
    }

    private static int readChunk(final ReadableByteChannel in, final byte[] into) throws IOException {
        return readChunk(in, ByteBuffer.wrap(into));
    }

    /** Fills {@code buffer} from {@code in} until it is full or the file ends; returns the bytes read. */
    private static int readChunk(final ReadableByteChannel in, final ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            if (in.read(buffer) < 0) {
                break;
            }
        }
        return buffer.position();
    }
}
