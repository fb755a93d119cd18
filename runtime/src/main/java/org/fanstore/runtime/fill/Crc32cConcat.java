package org.fanstore.runtime.fill;

/**
 * The CRC32C of two byte strings laid end to end, from their two CRCs and the second one's length, without the
 * bytes: so a pull file's per-body and whole-file checks come from CRCs summed while its ranges landed, not from
 * reading the file back (LandedCrcs).
 *
 * <p>Why it works: a CRC is the message, as a polynomial over GF(2), times x^32 modulo the generator P; the initial
 * and final inversions of CRC32C add a term that depends on the length only, and for a concatenation A.B those
 * terms cancel, leaving crc(A.B) = crc(A) * x^(8|B|) mod P + crc(B). Polynomials are held bit-reflected, as
 * {@link java.util.zip.CRC32C} computes them: bit 31 is the coefficient of x^0.
 */
final class Crc32cConcat {
    /** The Castagnoli polynomial, bit-reflected. */
    private static final int POLY = 0x82F63B78;
    /** The polynomial 1 (x^0), bit-reflected. */
    private static final int ONE = 0x80000000;
    /** X_POW_2K[k] = x^(2^k) mod P, for k up to 3 + 63: a byte is x^8, and a length is a long. */
    private static final int[] X_POW_2K = new int[67];

    static {
        X_POW_2K[0] = ONE >>> 1;                 // x^1
        for (int k = 1; k < X_POW_2K.length; k++) {
            X_POW_2K[k] = multiply(X_POW_2K[k - 1], X_POW_2K[k - 1]);
        }
    }

    private Crc32cConcat() {
    }

    /** The CRC32C of A followed by B, given crc(A), crc(B) and B's length in bytes. */
    static int concat(int crcA, int crcB, long lengthB) {
        if (lengthB < 0) {
            throw new IllegalArgumentException("negative length " + lengthB);
        }
        return multiply(xPow8n(lengthB), crcA) ^ crcB;
    }

    /** x^(8n) mod P: the product of x^(2^k) over the set bits k of 8n. */
    private static int xPow8n(long n) {
        int p = ONE;
        for (int k = 3; n != 0; n >>>= 1, k++) {
            if ((n & 1) != 0) {
                p = multiply(X_POW_2K[k], p);
            }
        }
        return p;
    }

    /** a * b mod P, both bit-reflected: shift-and-add over a's coefficients, reducing b as it is multiplied by x. */
    private static int multiply(int a, int b) {
        int product = 0;
        for (int bit = ONE; bit != 0; bit >>>= 1) {
            if ((a & bit) != 0) {
                product ^= b;
            }
            b = (b & 1) != 0 ? (b >>> 1) ^ POLY : b >>> 1;
        }
        return product;
    }
}
