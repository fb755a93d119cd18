package org.fanstore.prep.format;

import static org.fanstore.prep.format.PartitionDescriptor.LZ4_CHUNK_RAW_LENGTH;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.util.Arrays;
import java.util.Random;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;

/**
 * The streaming decoder against the encoder, fed the way a fetch feeds it: pieces of the fetch's message size
 * (508 KiB), of one byte, of random sizes, and one piece per body, so chunks arrive whole, split at every kind of
 * boundary (inside a header, between header and block, inside a block), and several to a piece. Then the bodies
 * it must refuse. One decoder (this thread's) serves every case in turn, as an open worker's does.
 */
class Lz4StreamingDecoderTest {
    private static final int[] SIZES = {0, 1, 64 * 1024 - 1, 64 * 1024, 128 * 1024, LZ4_CHUNK_RAW_LENGTH - 1,
        LZ4_CHUNK_RAW_LENGTH, LZ4_CHUNK_RAW_LENGTH + 1, 2 * LZ4_CHUNK_RAW_LENGTH + 5};
    private static final int MESSAGE = 508 * 1024;

    @Test
    void everySizeInEveryPieceSizeDecodesToTheSameBytesAndCrc() throws IOException {
        final Random pieces = new Random(11);
        for (final int size : SIZES) {
            for (final boolean random : new boolean[] {false, true}) {
                final byte[] raw = random ? Lz4Bodies.noise(size) : Lz4Bodies.text(size, 5);
                final byte[] body = Lz4Bodies.encode(raw);
                final String what = "size " + size + (random ? " random" : " text");
                assertArrayEquals(raw, stream(body, raw.length, fixed(Math.max(1, body.length))), what + ", whole");
                assertArrayEquals(raw, stream(body, raw.length, fixed(MESSAGE)), what + ", messages");
                assertArrayEquals(raw, stream(body, raw.length, r -> 1 + pieces.nextInt(20_000)), what + ", random");
                if (body.length < 300_000) {
                    assertArrayEquals(raw, stream(body, raw.length, fixed(1)), what + ", byte by byte");
                }
            }
        }
    }

    @Test
    void manySmallChunksInOnePieceAllDecode() throws IOException {
        // a body the encoder never makes (chunks of a few bytes) but the format allows: every chunk of it must be
        // decoded from the same piece, and the raw bytes follow one another
        final byte[] raw = Lz4Bodies.text(10_000, 5);
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        final Lz4Chunked.Encoder encoder = Lz4Chunked.encoder(Compression.LZ4);
        final byte[] chunk = new byte[encoder.maxChunkLength()];
        for (int at = 0; at < raw.length; at += 777) {
            body.write(chunk, 0, encoder.encodeChunk(raw, at, Math.min(777, raw.length - at), chunk, 0));
        }
        assertArrayEquals(raw, stream(body.toByteArray(), raw.length, fixed(Integer.MAX_VALUE)));
    }

    @Test
    void damagedBodiesAreRefusedAndTheDecoderStaysUsable() throws IOException {
        final byte[] raw = Lz4Bodies.text(LZ4_CHUNK_RAW_LENGTH + 100_000, 5);
        final byte[] body = Lz4Bodies.encode(raw);

        final IOException truncated = assertThrows(IOException.class,
            () -> stream(Arrays.copyOf(body, body.length - 10), raw.length, fixed(MESSAGE)));
        assertTrue(truncated.getMessage().contains("LZ4 chunk at body byte"), truncated.getMessage());

        final IOException inHeader = assertThrows(IOException.class,
            () -> stream(Arrays.copyOf(body, 3), raw.length, fixed(MESSAGE)));
        assertTrue(inHeader.getMessage().contains("inside a chunk"), inHeader.getMessage());

        final byte[] longer = Arrays.copyOf(body, body.length + 1);
        final IOException extra = assertThrows(IOException.class,
            () -> Lz4StreamingDecoder.forThread().begin(body.length, raw.length, sinkTo(new ByteArrayOutputStream()),
                new CRC32C()).write(ByteBuffer.wrap(longer)));
        assertTrue(extra.getMessage().contains("more than its"), extra.getMessage());

        final byte[] lying = body.clone();
        ByteBuffer.wrap(lying).order(ByteOrder.LITTLE_ENDIAN).putInt(0, LZ4_CHUNK_RAW_LENGTH + 1);
        final IOException header = assertThrows(IOException.class, () -> stream(lying, raw.length, fixed(MESSAGE)));
        assertTrue(header.getMessage().contains("claims"), header.getMessage());

        final IOException rawLength = assertThrows(IOException.class,
            () -> stream(body, raw.length + 1, fixed(MESSAGE)));
        assertTrue(rawLength.getMessage().contains("table says"), rawLength.getMessage());

        final byte[] flipped = body.clone();
        flipped[body.length / 2] ^= 0x55;
        try {
            final byte[] got = stream(flipped, raw.length, fixed(MESSAGE));
            assertTrue(crc(got) != crc(raw), "a damaged body decoded to the right bytes");
        } catch (final IOException e) {
            assertTrue(e.getMessage().contains("LZ4"), e.getMessage());
        }

        assertArrayEquals(raw, stream(body, raw.length, fixed(MESSAGE)), "a good body after the bad ones");
    }

    private interface Pieces {
        int next(int left);
    }

    private static Pieces fixed(final int size) {
        return left -> size;
    }

    /** Feeds {@code body} in pieces (heap buffers, as a fetch's are) and returns what came out, CRC checked. */
    private static byte[] stream(final byte[] body, final long rawLength, final Pieces pieces) throws IOException {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final CRC32C crc = new CRC32C();
        final Lz4StreamingDecoder decoder = Lz4StreamingDecoder.forThread().begin(body.length, rawLength,
            sinkTo(out), crc);
        int at = 0;
        while (at < body.length) {
            final int n = Math.min(body.length - at, pieces.next(body.length - at));
            final ByteBuffer piece = ByteBuffer.wrap(body, at, n);
            assertEquals(n, decoder.write(piece));
            assertEquals(0, piece.remaining(), "the whole piece is taken");
            at += n;
        }
        decoder.finish();  // after a failed piece it is not called: the next begin() starts afresh anyway
        final byte[] got = out.toByteArray();
        assertEquals(crc(got), crc.getValue(), "the CRC of the bytes written");
        return got;
    }

    private static java.nio.channels.WritableByteChannel sinkTo(final ByteArrayOutputStream out) {
        return Channels.newChannel(out);
    }

    private static long crc(final byte[] bytes) {
        final CRC32C crc = new CRC32C();
        crc.update(bytes);
        return crc.getValue();
    }
}
