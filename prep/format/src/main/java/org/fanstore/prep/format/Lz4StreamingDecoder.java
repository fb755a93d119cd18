package org.fanstore.prep.format;

import static org.fanstore.prep.format.PartitionDescriptor.LZ4_CHUNK_COMPRESSED_LENGTH_OFFSET;
import static org.fanstore.prep.format.PartitionDescriptor.LZ4_CHUNK_HEADER_LENGTH;
import static org.fanstore.prep.format.PartitionDescriptor.LZ4_CHUNK_RAW_LENGTH_OFFSET;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.WritableByteChannel;
import java.util.zip.CRC32C;


/**
 * Decodes a codec-1 body (format: {@link Lz4Chunked}) while its stored bytes arrive in pieces of any size, such
 * as the messages of a fetch from another rank: a compressed body is then never stored anywhere before it is
 * decoded (a scratch file would cost a write, a read and a file per open).
 *
 * <p>A chunk that arrives whole inside one piece decodes straight from that piece; a chunk split across pieces
 * is gathered in a direct buffer first, which only happens at message boundaries. Each chunk's raw bytes are
 * summed into the CRC32C and written out before the next one is decoded. Lengths are checked like
 * {@link Lz4DirectDecoder} does, with the same messages: a piece that runs past the stored length, a header
 * that claims more than is left, or a body that ends inside a chunk is an IOException, never garbage output.
 *
 * <p>One instance per thread ({@link #forThread}): its buffers only grow, sized as {@link Lz4DirectDecoder}'s, to
 * hold one worst-case chunk ({@value PartitionDescriptor#LZ4_CHUNK_RAW_LENGTH} raw bytes, its compressed bound).
 */
public final class Lz4StreamingDecoder implements WritableByteChannel {
    private static final ThreadLocal<Lz4StreamingDecoder> PER_THREAD =
        ThreadLocal.withInitial(Lz4StreamingDecoder::new);

    private final ByteBuffer header = ByteBuffer.allocate(LZ4_CHUNK_HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    /** The compressed bytes of a chunk split across pieces. */
    private ByteBuffer gather = Lz4DirectDecoder.direct(0);
    private ByteBuffer out = Lz4DirectDecoder.direct(0);
    private WritableByteChannel to;
    private CRC32C crc;
    private long storedLength;
    private long rawLength;
    /** Stored bytes taken so far: the body offset of the next byte. */
    private long taken;
    private long produced;
    /** The current chunk's lengths, once its header is whole; chunkCompressed < 0 while reading a header. */
    private int chunkRaw;
    private int chunkCompressed = -1;

    private Lz4StreamingDecoder() {
    }

    /** This thread's decoder; {@link #begin} it before each body. */
    public static Lz4StreamingDecoder forThread() {
        return PER_THREAD.get();
    }

    /** Starts a body of {@code storedLength} stored bytes that must decode to {@code rawLength} into {@code to}. */
    public Lz4StreamingDecoder begin(final long storedLength, final long rawLength, final WritableByteChannel to,
        final CRC32C crc) {
        this.storedLength = storedLength;
        this.rawLength = rawLength;
        this.to = to;
        this.crc = crc;
        taken = 0;
        produced = 0;
        chunkCompressed = -1;
        header.clear();
        gather.clear();
        return this;
    }

    /** Takes the whole piece (decoding every chunk it completes) and returns its length. */
    @Override
    public int write(final ByteBuffer src) throws IOException {
        final int n = src.remaining();
        if (to == null) {
            throw new IOException("LZ4 body bytes arrived before the decoder was started or after it finished");
        }
        if (taken + n > storedLength) {
            throw new IOException("LZ4 body has more than its " + storedLength + " stored bytes (byte "
                + (taken + n) + " arrived)");
        }
        while (src.hasRemaining()) {
            if (chunkCompressed < 0) {
                takeHeader(src);
            } else if (gather.position() == 0 && src.remaining() >= chunkCompressed) {
                final int at = src.position();
                src.position(at + chunkCompressed);
                taken += chunkCompressed;
                decodeChunk(src, at);
            } else {
                final int take = Math.min(chunkCompressed - gather.position(), src.remaining());
                final int limit = src.limit();
                src.limit(src.position() + take);
                gather.put(src);
                src.limit(limit);
                taken += take;
                if (gather.position() == chunkCompressed) {
                    decodeChunk(gather, 0);
                    gather.clear();
                }
            }
        }
        return n;
    }

    /**
     * Checks that the body ended where it should: every stored byte arrived, no chunk was left unfinished and
     * the raw length is the table's. The decoder is free for the next body afterwards, whatever the outcome.
     */
    public void finish() throws IOException {
        final long stored = storedLength;
        final boolean inChunk = chunkCompressed >= 0 || header.position() > 0;
        to = null;
        crc = null;
        if (taken != stored || inChunk) {
            throw new IOException("LZ4 body ends at body byte " + taken + (inChunk ? ", inside a chunk" : "")
                + "; " + stored + " stored bytes expected");
        }
        if (produced != rawLength) {
            throw new IOException("LZ4 body decodes to " + produced + " bytes, table says " + rawLength);
        }
    }

    private void takeHeader(final ByteBuffer src) throws IOException {
        final int take = Math.min(header.remaining(), src.remaining());
        for (int i = 0; i < take; i++) {
            header.put(src.get());
        }
        taken += take;
        if (header.hasRemaining()) {
            return;
        }
        chunkRaw = header.getInt(LZ4_CHUNK_RAW_LENGTH_OFFSET);
        final int compressed = header.getInt(LZ4_CHUNK_COMPRESSED_LENGTH_OFFSET);
        Lz4Chunked.checkChunk(chunkRaw, compressed, storedLength - taken, rawLength - produced, taken);
        chunkCompressed = compressed;
        header.clear();
        if (gather.capacity() < compressed) {
            gather = Lz4DirectDecoder.direct(compressed);
        }
        if (out.capacity() < chunkRaw) {
            out = Lz4DirectDecoder.direct(chunkRaw);
        }
    }

    private void decodeChunk(final ByteBuffer from, final int at) throws IOException {
        Lz4Chunked.decompressChunk(from, at, chunkCompressed, out, 0, chunkRaw);
        out.clear().limit(chunkRaw);
        crc.update(out);
        out.position(0);
        while (out.hasRemaining()) {
            to.write(out);
        }
        produced += chunkRaw;
        chunkCompressed = -1;
    }

    @Override
    public boolean isOpen() {
        return true;
    }

    /** Nothing to release: the buffers stay with the thread for its next body. */
    @Override
    public void close() {
    }
}
