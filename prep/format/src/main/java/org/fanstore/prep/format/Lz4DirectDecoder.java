package org.fanstore.prep.format;

import static org.fanstore.prep.format.PartitionDescriptor.LZ4_CHUNK_COMPRESSED_LENGTH_OFFSET;
import static org.fanstore.prep.format.PartitionDescriptor.LZ4_CHUNK_HEADER_LENGTH;
import static org.fanstore.prep.format.PartitionDescriptor.LZ4_CHUNK_RAW_LENGTH;
import static org.fanstore.prep.format.PartitionDescriptor.LZ4_CHUNK_RAW_LENGTH_OFFSET;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.util.zip.CRC32C;


/**
 * Decodes a codec-1 body (format: {@link Lz4Chunked}) off the Java heap: the stored bytes are read with one
 * positioned read into a direct buffer, LZ4 (the JNI decoder when present) writes the raw bytes into a second
 * direct buffer, the CRC32C is summed there, and writes of at most {@link WritePieces#BYTES} bytes hand them to the
 * output file, each piece summed just before its write, while it is in the CPU's cache. A body of up to
 * {@link #OUT_MAX} raw bytes costs one read; larger ones go a window at a time.
 *
 * <p>It replaced a heap-array path that copied every byte twice more (channel into a heap array, heap array into
 * the JDK's temporary direct buffer for the write) and allocated per chunk. Callers go through
 * {@link Lz4Chunked#decodeTo}, which keeps one instance per thread.
 *
 * <p>One instance per thread: it owns its buffers, which only grow (to at most {@link #IN_MAX} +
 * {@link #OUT_MAX} bytes of native memory).
 */
public final class Lz4DirectDecoder {
    /** Raw bytes held before one write: two full chunks. */
    static final int OUT_MAX = 2 * LZ4_CHUNK_RAW_LENGTH;
    /** Stored bytes read at once: two worst-case chunks. */
    static final int IN_MAX = 2 * (LZ4_CHUNK_HEADER_LENGTH + LZ4_CHUNK_RAW_LENGTH + LZ4_CHUNK_RAW_LENGTH / 255 + 16);
    /** The most raw bytes one write hands over (WritePieces says why). */
    static final int WRITE_PIECE = WritePieces.BYTES;
    private static final int MIN_BUFFER = 64 * 1024;

    private ByteBuffer in = direct(MIN_BUFFER);
    private ByteBuffer out = direct(MIN_BUFFER);
    /** Body offset of {@code in}'s byte 0, and how many bytes from there {@code in} holds. */
    private long windowStart;
    private int windowLength;

    /**
     * Decodes the body at {@code [position, position+storedLength)} of {@code from} into {@code to}, feeding the
     * raw bytes to {@code crc}. Returns the raw bytes written. Throws IOException describing the first
     * inconsistency (the same messages as {@link Lz4Chunked#decode}).
     */
    public long decode(final FileChannel from, final long position, final long storedLength, final long rawLength,
        final WritableByteChannel to, final CRC32C crc) throws IOException {
        windowStart = 0;
        windowLength = 0;
        out = ensureOut((int)Math.min(OUT_MAX, Math.max(rawLength, 0)));
        int held = 0;
        long consumed = 0;
        long produced = 0;
        while (consumed < storedLength) {
            if (storedLength - consumed < LZ4_CHUNK_HEADER_LENGTH) {
                throw new IOException("LZ4 chunk header truncated at body byte " + consumed);
            }
            int at = window(from, position, storedLength, consumed, LZ4_CHUNK_HEADER_LENGTH);
            final int chunkRaw = in.getInt(at + LZ4_CHUNK_RAW_LENGTH_OFFSET);
            final int chunkCompressed = in.getInt(at + LZ4_CHUNK_COMPRESSED_LENGTH_OFFSET);
            consumed += LZ4_CHUNK_HEADER_LENGTH;
            Lz4Chunked.checkChunk(chunkRaw, chunkCompressed, storedLength - consumed, rawLength - produced - held,
                consumed);
            at = window(from, position, storedLength, consumed, chunkCompressed);
            if (held + chunkRaw > out.capacity()) {
                flush(held, to, crc);
                produced += held;
                held = 0;
                out = ensureOut(chunkRaw);
            }
            Lz4Chunked.decompressChunk(in, at, chunkCompressed, out, held, chunkRaw);
            held += chunkRaw;
            consumed += chunkCompressed;
        }
        flush(held, to, crc);
        produced += held;
        if (produced != rawLength) {
            throw new IOException("LZ4 body decodes to " + produced + " bytes, table says " + rawLength);
        }
        return produced;
    }

    /**
     * The index in {@code in} of body byte {@code offset}, after making sure {@code length} bytes from there are
     * held: otherwise the window moves to start at {@code offset} and is filled with as much of the rest of the
     * body as fits, so a small body is read whole, once.
     */
    private int window(final FileChannel from, final long position, final long storedLength, final long offset,
        final int length) throws IOException {
        if (offset >= windowStart && offset + length <= windowStart + windowLength) {
            return (int)(offset - windowStart);
        }
        final int want = (int)Math.max(length, Math.min(IN_MAX, storedLength - offset));
        if (in.capacity() < want) {
            in = direct(want);
        }
        in.clear().limit(want);
        long at = position + offset;
        while (in.hasRemaining()) {
            final int n = from.read(in, at);
            if (n < 0) {
                throw new EOFException("file ends at byte " + at + " inside a body");
            }
            at += n;
        }
        windowStart = offset;
        windowLength = want;
        return 0;
    }

    private void flush(final int held, final WritableByteChannel to, final CRC32C crc) throws IOException {
        if (held == 0) {
            return;
        }
        out.clear();
        for (int at = 0; at < held; at = out.position()) {
            out.limit(Math.min(held, at + WRITE_PIECE));
            crc.update(out);
            out.position(at);
            while (out.hasRemaining()) {
                to.write(out);
            }
        }
    }

    private ByteBuffer ensureOut(final int needed) {
        return out.capacity() >= needed ? out : direct(needed);
    }

    /** A direct buffer of at least {@code needed} bytes, rounded up to a power of two (below the caps). */
    static ByteBuffer direct(final int needed) {
        final int size = needed >= OUT_MAX ? needed
            : Math.max(MIN_BUFFER, Integer.highestOneBit(Math.max(1, needed - 1)) << 1);
        return ByteBuffer.allocateDirect(size).order(ByteOrder.LITTLE_ENDIAN);
    }
}
