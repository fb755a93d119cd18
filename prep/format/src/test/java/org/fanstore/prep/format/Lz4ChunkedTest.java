package org.fanstore.prep.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class Lz4ChunkedTest {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @EnumSource(value = Compression.class, names = {"LZ4", "LZ4HC"})
    void aMultiChunkBodyDecodesInMemoryAndStreamed(final Compression level) throws IOException {
        final byte[] raw = Lz4Bodies.text(PartitionDescriptor.LZ4_CHUNK_RAW_LENGTH * 2 + 777, 3);
        final Lz4Chunked.Encoder encoder = Lz4Chunked.encoder(level);
        final byte[] encoded = new byte[(int)encoder.maxEncodedLength(raw.length)];
        final int length = encoder.encode(raw, 0, raw.length, encoded, 0);
        assertTrue(length < raw.length * 3 / 4, "text should compress, got " + length);
        final byte[] body = Arrays.copyOf(encoded, length);
        final int firstChunkRaw = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN)
            .getInt(PartitionDescriptor.LZ4_CHUNK_RAW_LENGTH_OFFSET);
        assertEquals(PartitionDescriptor.LZ4_CHUNK_RAW_LENGTH, firstChunkRaw);

        assertArrayEquals(raw, Lz4Chunked.decode(body, raw.length));

        final Path file = Files.write(tmp.resolve("body"), body);
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final CRC32C crc = new CRC32C();
        try (FileChannel in = FileChannel.open(file)) {
            assertEquals(raw.length, Lz4Chunked.decodeTo(in, 0, body.length, raw.length, Channels.newChannel(out),
                crc));
        }
        assertArrayEquals(raw, out.toByteArray());
        final CRC32C expected = new CRC32C();
        expected.update(raw);
        assertEquals(expected.getValue(), crc.getValue());
    }

    @Test
    void damagedBodiesAreRejectedNotDecodedToGarbage() {
        final byte[] raw = Lz4Bodies.text(100_000, 3);
        final Lz4Chunked.Encoder encoder = Lz4Chunked.encoder(Compression.LZ4);
        final byte[] encoded = new byte[(int)encoder.maxEncodedLength(raw.length)];
        final byte[] body = Arrays.copyOf(encoded, encoder.encode(raw, 0, raw.length, encoded, 0));

        final IOException truncated = assertThrows(IOException.class,
            () -> Lz4Chunked.decode(Arrays.copyOf(body, body.length - 10), raw.length));
        assertTrue(truncated.getMessage().contains("LZ4"), truncated.getMessage());

        final byte[] lying = body.clone();
        ByteBuffer.wrap(lying).order(ByteOrder.LITTLE_ENDIAN).putInt(0, raw.length + 1);
        assertThrows(IOException.class, () -> Lz4Chunked.decode(lying, raw.length));

        assertThrows(IOException.class, () -> Lz4Chunked.decode(body, raw.length + 1));
    }
}
