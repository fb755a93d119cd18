package org.fanstore.runtime.fill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** Joining two CRC32Cs gives the CRC32C of the joined bytes, checked against the JDK's over random splits. */
class Crc32cConcatTest {
    private static int crc(byte[] b, int from, int to) {
        CRC32C c = new CRC32C();
        c.update(b, from, to - from);
        return (int) c.getValue();
    }

    @Test
    void theJoinOfTwoPartsIsTheCrcOfTheWhole() {
        SplittableRandom random = new SplittableRandom(42);
        for (int round = 0; round < 500; round++) {
            byte[] b = new byte[random.nextInt(1, 70_000)];
            random.nextBytes(b);
            int cut = random.nextInt(b.length + 1);
            assertEquals(crc(b, 0, b.length), Crc32cConcat.concat(crc(b, 0, cut), crc(b, cut, b.length),
                    b.length - cut), "length " + b.length + " cut at " + cut);
        }
    }

    @Test
    void emptyPartsChangeNothingAndKnownVectorsHold() {
        byte[] digits = "123456789".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        assertEquals(0xE3069283, crc(digits, 0, 9), "CRC-32C check value (RFC 3720)");
        assertEquals(0xE3069283, Crc32cConcat.concat(crc(digits, 0, 4), crc(digits, 4, 9), 5));
        assertEquals(0xE3069283, Crc32cConcat.concat(0xE3069283, 0, 0), "an empty second part");
        assertEquals(0xE3069283, Crc32cConcat.concat(0, 0xE3069283, 9), "an empty first part");
        assertThrows(IllegalArgumentException.class, () -> Crc32cConcat.concat(0, 0, -1));
    }

    @Test
    void longRunsOfZerosJoinAsTheirBytesWould() {
        byte[] zeros = new byte[3 << 20];
        int tail = crc(zeros, 0, zeros.length);
        byte[] head = {1, 2, 3};
        byte[] both = new byte[head.length + zeros.length];
        System.arraycopy(head, 0, both, 0, head.length);
        assertEquals(crc(both, 0, both.length), Crc32cConcat.concat(crc(head, 0, 3), tail, zeros.length));
    }
}
