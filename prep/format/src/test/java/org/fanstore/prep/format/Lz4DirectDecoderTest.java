package org.fanstore.prep.format;

import static org.fanstore.prep.format.PartitionDescriptor.LZ4_CHUNK_RAW_LENGTH;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The off-heap decoder against the encoder, at the sizes where its windows and flushes change: empty, one byte,
 * just under 64 KiB (its smallest buffer), exact chunk multiples and one past them, and a body that is not at
 * the start of its file (as in a partition). One decoder serves every case in turn, as a worker thread's does.
 */
class Lz4DirectDecoderTest {
    private static final int[] SIZES = {0, 1, 64 * 1024 - 1, 64 * 1024, LZ4_CHUNK_RAW_LENGTH - 1, LZ4_CHUNK_RAW_LENGTH,
        LZ4_CHUNK_RAW_LENGTH + 1, 2 * LZ4_CHUNK_RAW_LENGTH, 2 * LZ4_CHUNK_RAW_LENGTH + 1, 3 * LZ4_CHUNK_RAW_LENGTH + 5};
    private static final int LEAD = 4099;

    @TempDir
    Path tmp;

    @Test
    void everySizeDecodesToTheSameBytesAndCrc() throws IOException {
        final Lz4DirectDecoder decoder = new Lz4DirectDecoder();
        for (final int size : SIZES) {
            for (final boolean random : new boolean[] {false, true}) {
                final byte[] raw = random ? Lz4Bodies.noise(size) : Lz4Bodies.text(size, 5);
                final byte[] body = Lz4Bodies.encode(raw);
                final byte[] got = decodeFile(decoder, body, raw.length);
                assertArrayEquals(raw, got, "size " + size + (random ? " random" : " text"));
            }
        }
    }

    @Test
    void damagedBodiesAreRefusedAndTheDecoderStaysUsable() throws IOException {
        final Lz4DirectDecoder decoder = new Lz4DirectDecoder();
        final byte[] raw = Lz4Bodies.text(LZ4_CHUNK_RAW_LENGTH + 100_000, 5);
        final byte[] body = Lz4Bodies.encode(raw);

        final byte[] flipped = body.clone();
        flipped[body.length / 2] ^= 0x55;
        final CRC32C expected = crc(raw);
        final IOException bad = assertThrowsOrWrongCrc(decoder, flipped, raw.length, expected);
        assertTrue(bad == null || bad.getMessage().contains("LZ4"), String.valueOf(bad));

        final IOException truncated = assertThrows(IOException.class,
            () -> decodeFile(decoder, Arrays.copyOf(body, body.length - 10), raw.length));
        assertTrue(truncated.getMessage().contains("LZ4"), truncated.getMessage());

        final byte[] lying = body.clone();
        ByteBuffer.wrap(lying).order(ByteOrder.LITTLE_ENDIAN).putInt(0, LZ4_CHUNK_RAW_LENGTH + 1);
        assertThrows(IOException.class, () -> decodeFile(decoder, lying, raw.length));
        assertThrows(IOException.class, () -> decodeFile(decoder, body, raw.length + 1));

        assertArrayEquals(raw, decodeFile(decoder, body, raw.length), "a good body after the bad ones");
    }

    @Test
    void bodiesReachTheOutputInWritesOfAtMostOnePieceEvenWhenWritesFallShort() throws IOException {
        final Lz4DirectDecoder decoder = new Lz4DirectDecoder();
        final int piece = Lz4DirectDecoder.WRITE_PIECE;
        for (final int size : new int[] {piece - 1, piece, piece + 1, 2 * 1024 * 1024, LZ4_CHUNK_RAW_LENGTH + 7}) {
            final byte[] raw = Lz4Bodies.text(size, 5);
            final byte[] body = Lz4Bodies.encode(raw);
            final Path in = tmp.resolve("partition-" + size);
            Files.write(in, body);
            final ShortWrites to = new ShortWrites();
            final CRC32C crc = new CRC32C();
            try (FileChannel from = FileChannel.open(in)) {
                assertEquals(size, decoder.decode(from, 0, body.length, size, to, crc));
            }
            assertArrayEquals(raw, to.got.toByteArray(), "size " + size);
            assertEquals(crc(raw).getValue(), crc.getValue(), "size " + size);
            assertTrue(to.largestOffer <= piece, "size " + size + ": a write was offered " + to.largestOffer);
        }
    }

    /** Takes at most 100,000 bytes per call and remembers the most it was offered at once. */
    private static final class ShortWrites implements java.nio.channels.WritableByteChannel {
        final java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
        int largestOffer;

        @Override
        public int write(final ByteBuffer src) {
            largestOffer = Math.max(largestOffer, src.remaining());
            final byte[] b = new byte[Math.min(src.remaining(), 100_000)];
            src.get(b);
            got.write(b, 0, b.length);
            return b.length;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
        }
    }

    /** A flipped byte either breaks the LZ4 block (an exception) or decodes to other bytes (another CRC). */
    private IOException assertThrowsOrWrongCrc(final Lz4DirectDecoder decoder, final byte[] body, final int rawLength,
        final CRC32C good) {
        try {
            final byte[] got = decodeFile(decoder, body, rawLength);
            assertTrue(crc(got).getValue() != good.getValue(), "a damaged body decoded to the right bytes");
            return null;
        } catch (final IOException e) {
            return e;
        }
    }

    private byte[] decodeFile(final Lz4DirectDecoder decoder, final byte[] body, final long rawLength)
        throws IOException {
        final byte[] lead = Lz4Bodies.noise(LEAD);
        final Path in = tmp.resolve("partition");
        final Path out = tmp.resolve("decoded");
        final byte[] file = Arrays.copyOf(lead, LEAD + body.length + 3);
        System.arraycopy(body, 0, file, LEAD, body.length);
        Files.write(in, file);
        final CRC32C crc = new CRC32C();
        try (FileChannel from = FileChannel.open(in);
             FileChannel to = FileChannel.open(out, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                 StandardOpenOption.TRUNCATE_EXISTING)) {
            assertEquals(rawLength, decoder.decode(from, LEAD, body.length, rawLength, to, crc));
        }
        final byte[] got = Files.readAllBytes(out);
        assertEquals(crc(got).getValue(), crc.getValue(), "the CRC of the bytes written");
        return got;
    }

    private static CRC32C crc(final byte[] bytes) {
        final CRC32C crc = new CRC32C();
        crc.update(bytes);
        return crc;
    }
}
