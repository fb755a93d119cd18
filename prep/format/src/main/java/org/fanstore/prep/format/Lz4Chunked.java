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

import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * Codec 1: a body is a sequence of chunks {@code u32 raw length, u32 compressed length, LZ4 block}, each chunk
 * holding at most {@link PartitionDescriptor#LZ4_CHUNK_RAW_LENGTH} raw bytes, so bodies of any size (over 2 GiB
 * too) can be encoded and decoded a chunk at a time. Decoding trusts nothing: every length is checked.
 */
public final class Lz4Chunked {
    private static final LZ4Factory FACTORY = LZ4Factory.fastestInstance();
    private static final LZ4SafeDecompressor DECOMPRESSOR = FACTORY.safeDecompressor();

    private Lz4Chunked() {
    }

    /** An encoder for one compression level; safe to share between threads. */
    public static Encoder encoder(final Compression compression) {
        return switch (compression) {
            case LZ4 -> new Encoder(FACTORY.fastCompressor());
            case LZ4HC -> new Encoder(FACTORY.highCompressor());
            case NONE -> throw new IllegalArgumentException("compression none has no LZ4 encoder");
        };
    }

    /** Compresses raw bytes into the chunked body format. */
    public static final class Encoder {
        private final LZ4Compressor compressor;

        private Encoder(final LZ4Compressor compressor) {
            this.compressor = compressor;
        }

        /** Upper bound of the encoded length of {@code rawLength} bytes. */
        public long maxEncodedLength(final long rawLength) {
            final long fullChunks = rawLength / LZ4_CHUNK_RAW_LENGTH;
            final int tail = (int)(rawLength % LZ4_CHUNK_RAW_LENGTH);
            long max = fullChunks * (LZ4_CHUNK_HEADER_LENGTH + compressor.maxCompressedLength(LZ4_CHUNK_RAW_LENGTH));
            if (tail > 0) {
                max += LZ4_CHUNK_HEADER_LENGTH + compressor.maxCompressedLength(tail);
            }
            return max;
        }

        /** Upper bound of one encoded chunk of at most {@link PartitionDescriptor#LZ4_CHUNK_RAW_LENGTH} bytes. */
        public int maxChunkLength() {
            return LZ4_CHUNK_HEADER_LENGTH + compressor.maxCompressedLength(LZ4_CHUNK_RAW_LENGTH);
        }

        /**
         * Encodes {@code src[offset, offset+length)} into {@code dst} from {@code dstOffset}; {@code dst} must hold
         * {@link #maxEncodedLength}. Returns the encoded length.
         */
        public int encode(final byte[] src, final int offset, final int length, final byte[] dst, final int dstOffset) {
            int written = 0;
            for (int done = 0; done < length; done += LZ4_CHUNK_RAW_LENGTH) {
                final int chunk = Math.min(LZ4_CHUNK_RAW_LENGTH, length - done);
                written += encodeChunk(src, offset + done, chunk, dst, dstOffset + written);
            }
            return written;
        }

        /** Encodes one chunk (at most 4 MiB raw) with its header; returns the bytes written to {@code dst}. */
        public int encodeChunk(final byte[] src, final int offset, final int length, final byte[] dst,
            final int dstOffset) {
            final int headerEnd = dstOffset + LZ4_CHUNK_HEADER_LENGTH;
            final int compressed = compressor.compress(src, offset, length, dst, headerEnd, dst.length - headerEnd);
            final ByteBuffer header = ByteBuffer.wrap(dst, dstOffset, LZ4_CHUNK_HEADER_LENGTH)
                .order(ByteOrder.LITTLE_ENDIAN);
            header.putInt(dstOffset + LZ4_CHUNK_RAW_LENGTH_OFFSET, length);
            header.putInt(dstOffset + LZ4_CHUNK_COMPRESSED_LENGTH_OFFSET, compressed);
            return LZ4_CHUNK_HEADER_LENGTH + compressed;
        }
    }

    /** Decodes a whole body held in memory; throws IOException describing the first inconsistency. */
    public static byte[] decode(final byte[] stored, final long rawLength) throws IOException {
        if (rawLength > Integer.MAX_VALUE - 8) {
            throw new IOException("raw length " + rawLength + " is too large for memory; stream it instead");
        }
        final byte[] raw = new byte[(int)rawLength];
        final ByteBuffer in = ByteBuffer.wrap(stored).order(ByteOrder.LITTLE_ENDIAN);
        int produced = 0;
        int position = 0;
        while (position < stored.length) {
            if (stored.length - position < LZ4_CHUNK_HEADER_LENGTH) {
                throw new IOException("LZ4 chunk header truncated at body byte " + position);
            }
            final int chunkRaw = in.getInt(position + LZ4_CHUNK_RAW_LENGTH_OFFSET);
            final int chunkCompressed = in.getInt(position + LZ4_CHUNK_COMPRESSED_LENGTH_OFFSET);
            position += LZ4_CHUNK_HEADER_LENGTH;
            checkChunk(chunkRaw, chunkCompressed, stored.length - position, raw.length - produced, position);
            decompress(stored, position, chunkCompressed, raw, produced, chunkRaw);
            position += chunkCompressed;
            produced += chunkRaw;
        }
        if (produced != raw.length) {
            throw new IOException("LZ4 body decodes to " + produced + " bytes, table says " + rawLength);
        }
        return raw;
    }

    /** Each thread decodes with its own off-heap buffers (they only grow; see Lz4DirectDecoder). */
    private static final ThreadLocal<Lz4DirectDecoder> DECODERS = ThreadLocal.withInitial(Lz4DirectDecoder::new);

    /**
     * Decodes the body at {@code [position, position+storedLength)} of {@code in} into {@code out}, feeding the
     * raw bytes to {@code crc}. Returns the raw bytes written. One implementation for every reader of bodies
     * (runtime opens, the pull's check, verify): {@link Lz4DirectDecoder}, off the Java heap.
     */
    public static long decodeTo(final FileChannel in, final long position, final long storedLength,
        final long rawLength, final WritableByteChannel out, final CRC32C crc) throws IOException {
        return DECODERS.get().decode(in, position, storedLength, rawLength, out, crc);
    }

    static void checkChunk(final int chunkRaw, final int chunkCompressed, final long storedLeft,
        final long rawLeft, final long at) throws IOException {
        if (chunkRaw <= 0 || chunkRaw > LZ4_CHUNK_RAW_LENGTH || chunkRaw > rawLeft) {
            throw new IOException("LZ4 chunk at body byte " + at + " claims " + Integer.toUnsignedString(chunkRaw) +
                " raw bytes (" + rawLeft + " left, chunk limit " + LZ4_CHUNK_RAW_LENGTH + ")");
        }
        if (chunkCompressed <= 0 || chunkCompressed > storedLeft) {
            throw new IOException("LZ4 chunk at body byte " + at + " claims " +
                Integer.toUnsignedString(chunkCompressed) + " compressed bytes, " + storedLeft + " left in the body");
        }
    }

    private static void decompress(final byte[] src, final int offset, final int length, final byte[] dst,
        final int dstOffset, final int expected) throws IOException {
        try {
            checkDecoded(DECOMPRESSOR.decompress(src, offset, length, dst, dstOffset, expected), expected);
        } catch (final LZ4Exception e) {
            throw malformed(e);
        }
    }

    /**
     * Decodes one chunk's LZ4 block, {@code src[at, at + compressed)}, into {@code dst} from {@code dstAt}: exactly
     * {@code chunkRaw} bytes, or an IOException saying what was wrong (the off-heap decoders' one decode step).
     */
    static void decompressChunk(final ByteBuffer src, final int at, final int compressed, final ByteBuffer dst,
        final int dstAt, final int chunkRaw) throws IOException {
        try {
            checkDecoded(DECOMPRESSOR.decompress(src, at, compressed, dst, dstAt, chunkRaw), chunkRaw);
        } catch (final LZ4Exception e) {
            throw malformed(e);
        }
    }

    /** The one wording of a block that decoded to another length than its chunk header says (both decoders). */
    private static void checkDecoded(final int got, final int expected) throws IOException {
        if (got != expected) {
            throw new IOException("LZ4 block decodes to " + got + " bytes, its chunk header says " + expected);
        }
    }

    private static IOException malformed(final LZ4Exception e) {
        return new IOException("LZ4 block is malformed: " + e.getMessage());
    }

    static void readFully(final FileChannel in, final ByteBuffer buffer, final long position) throws IOException {
        long at = position;
        while (buffer.hasRemaining()) {
            final int n = in.read(buffer, at);
            if (n < 0) {
                throw new EOFException("file ends at byte " + at + " inside a body");
            }
            at += n;
        }
    }
}
