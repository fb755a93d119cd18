package org.fanstore.prep;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.zip.CRC32C;

import org.fanstore.prep.format.Compression;
import org.fanstore.prep.format.Lz4Chunked;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionWriter;

/**
 * Turns a source file into a stored body. Files up to {@link #IN_MEMORY_LIMIT} are read whole by a worker
 * thread ({@link #encode}); larger ones are streamed by the writer a chunk at a time ({@link #stream}), so a
 * file of any size needs only a few MiB of memory. Compression is kept only when it saves at least 1/21 of the
 * bytes (ratio 1.05): below that, the decompression cost on every read buys too little.
 */
final class BodyEncoder
{
    /** Larger files are streamed instead of being held in memory. */
    static final long IN_MEMORY_LIMIT = 32L << 20;

    private static final int STREAM_CHUNK = PartitionDescriptor.LZ4_CHUNK_RAW_LENGTH;
    /** Compared against to turn all-zero chunks of uncompressed big files into holes. */
    private static final byte[] ZEROS = new byte[STREAM_CHUNK];

    /** A file's stored body, ready to append to a partition. */
    record EncodedBody(int codec, long rawLength, int rawCrc, byte[] stored, int storedLength)
    {
    }

    /** What a streamed body came to. */
    record Streamed(long rawLength, long storedLength)
    {
    }

    private final Lz4Chunked.Encoder encoder;
    private final BufferPool buffers = new BufferPool();

    BodyEncoder(final Compression compression)
    {
        this.encoder = compression == Compression.NONE ? null : Lz4Chunked.encoder(compression);
    }

    /** Hands a written body's array back for reuse. */
    void recycle(final EncodedBody body)
    {
        buffers.give(body.stored());
    }

    static boolean worthKeeping(final long rawLength, final long encodedLength)
    {
        return encodedLength * 21 <= rawLength * 20;
    }

    /** Reads a small file whole and encodes it. */
    EncodedBody encode(final Path source) throws IOException
    {
        final byte[] raw;
        final int length;
        try (FileChannel in = FileChannel.open(source, StandardOpenOption.READ))
        {
            final long size = in.size();
            if (size > IN_MEMORY_LIMIT)
            {
                throw new IOException(source + " grew to " + size + " bytes while prep was running");
            }
            raw = buffers.take((int)size);
            final ByteBuffer buffer = ByteBuffer.wrap(raw, 0, (int)size);
            int n;
            do
            {
                n = in.read(buffer);
            }
            while (n >= 0 && buffer.hasRemaining());
            length = buffer.position();
        }
        final CRC32C crc = new CRC32C();
        crc.update(raw, 0, length);
        if (encoder != null && length > 0)
        {
            final byte[] encoded = buffers.take((int)encoder.maxEncodedLength(length));
            final int encodedLength = encoder.encode(raw, 0, length, encoded, 0);
            if (worthKeeping(length, encodedLength))
            {
                buffers.give(raw);
                return new EncodedBody(PartitionDescriptor.CODEC_LZ4_CHUNKED, length, (int)crc.getValue(), encoded,
                    encodedLength);
            }
            buffers.give(encoded);
        }
        return new EncodedBody(PartitionDescriptor.CODEC_RAW, length, (int)crc.getValue(), raw, length);
    }

    /** Streams a large file into {@code writer} as the body of {@code entry}. */
    Streamed stream(final Path source, final PartitionWriter writer, final PartitionEntry entry) throws IOException
    {
        final byte[] raw = new byte[STREAM_CHUNK];
        writer.beginStream();
        if (encoder != null)
        {
            final byte[] encoded = new byte[encoder.maxChunkLength()];
            final CRC32C crc = new CRC32C();
            long rawLength = 0;
            long storedLength = 0;
            try (FileChannel in = FileChannel.open(source, StandardOpenOption.READ))
            {
                for (int n; (n = readChunk(in, raw)) > 0; )
                {
                    crc.update(raw, 0, n);
                    final int e = encoder.encodeChunk(raw, 0, n, encoded, 0);
                    writer.appendStream(encoded, 0, e);
                    rawLength += n;
                    storedLength += e;
                }
            }
            if (rawLength > 0 && worthKeeping(rawLength, storedLength))
            {
                writer.endStream(entry, PartitionDescriptor.CODEC_LZ4_CHUNKED, rawLength, (int)crc.getValue());
                return new Streamed(rawLength, storedLength);
            }
            writer.restartStream();
        }
        final CRC32C crc = new CRC32C();
        long rawLength = 0;
        try (FileChannel in = FileChannel.open(source, StandardOpenOption.READ))
        {
            for (int n; (n = readChunk(in, raw)) > 0; )
            {
                crc.update(raw, 0, n);
                if (Arrays.mismatch(raw, 0, n, ZEROS, 0, n) < 0)
                {
                    writer.appendZeros(n);
                }
                else
                {
                    writer.appendStream(raw, 0, n);
                }
                rawLength += n;
            }
        }
        writer.endStream(entry, PartitionDescriptor.CODEC_RAW, rawLength, (int)crc.getValue());
        return new Streamed(rawLength, rawLength);
    }

    private static int readChunk(final FileChannel in, final byte[] into) throws IOException
    {
        final ByteBuffer buffer = ByteBuffer.wrap(into);
        while (buffer.hasRemaining())
        {
            if (in.read(buffer) < 0)
            {
                break;
            }
        }
        return buffer.position();
    }
}
