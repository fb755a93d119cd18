package org.fanstore.prep.format;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;

/** Bodies for the LZ4 codec tests: raw bytes that compress (text) or do not (noise), and their encoding. */
final class Lz4Bodies {
    private Lz4Bodies() {
    }

    /** The chunked body of {@code raw}, as prep's default level writes it. */
    static byte[] encode(final byte[] raw) {
        final Lz4Chunked.Encoder encoder = Lz4Chunked.encoder(Compression.LZ4);
        final byte[] encoded = new byte[(int)encoder.maxEncodedLength(raw.length)];
        return Arrays.copyOf(encoded, encoder.encode(raw, 0, raw.length, encoded, 0));
    }

    /** Incompressible bytes, the same for the same length. */
    static byte[] noise(final int length) {
        final byte[] b = new byte[length];
        new Random(length).nextBytes(b);
        return b;
    }

    /** CSV-like text (~3x with LZ4), the same for the same length and seed. */
    static byte[] text(final int length, final long seed) {
        final Random random = new Random(seed);
        final StringBuilder sb = new StringBuilder(length + 64);
        while (sb.length() < length) {
            sb.append(random.nextInt(100_000)).append(",label_").append(random.nextInt(10)).append('\n');
        }
        return sb.substring(0, length).getBytes(StandardCharsets.US_ASCII);
    }
}
