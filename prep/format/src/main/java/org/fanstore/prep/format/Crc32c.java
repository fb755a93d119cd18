package org.fanstore.prep.format;

/**
 * CRC32C arithmetic that {@link java.util.zip.CRC32C} lacks: the CRC of a concatenation from the CRCs of its
 * parts, so a writer can report the whole-file CRC without reading back what it wrote. This is zlib's
 * crc32_combine (GF(2) matrix squaring) with the Castagnoli polynomial.
 */
public final class Crc32c {
    private static final long REFLECTED_POLYNOMIAL = 0x82F63B78L;

    private Crc32c() {
    }

    /** CRC32C of {@code A || B} given {@code crcA = CRC32C(A)}, {@code crcB = CRC32C(B)} and B's length. */
    public static int combine(final int crcA, final int crcB, final long lengthB) {
        if (lengthB <= 0) {
            return crcA;
        }
        final long[] even = new long[32];
        final long[] odd = new long[32];
        odd[0] = REFLECTED_POLYNOMIAL;
        long row = 1;
        for (int n = 1; n < 32; n++) {
            odd[n] = row;
            row <<= 1;
        }
        square(even, odd);
        square(odd, even);

        long crc = crcA & 0xFFFF_FFFFL;
        long remaining = lengthB;
        do {
            square(even, odd);
            if ((remaining & 1) != 0) {
                crc = times(even, crc);
            }
            remaining >>>= 1;
            if (remaining == 0) {
                break;
            }
            square(odd, even);
            if ((remaining & 1) != 0) {
                crc = times(odd, crc);
            }
            remaining >>>= 1;
        } while (remaining != 0);
        return (int)(crc ^ (crcB & 0xFFFF_FFFFL));
    }

    private static long times(final long[] matrix, final long vector) {
        long sum = 0;
        long v = vector;
        for (int i = 0; v != 0; i++, v >>>= 1) {
            if ((v & 1) != 0) {
                sum ^= matrix[i];
            }
        }
        return sum;
    }

    private static void square(final long[] result, final long[] matrix) {
        for (int n = 0; n < 32; n++) {
            result[n] = times(matrix, matrix[n]);
        }
    }
}
