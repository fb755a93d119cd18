package org.fanstore.prep.format;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;

class Crc32cTest {
    @Test
    void combiningTheCrcsOfTwoPartsGivesTheCrcOfTheWhole() {
        final Random random = new Random(7);
        for (int round = 0; round < 200; round++) {
            final byte[] data = new byte[random.nextInt(20_000)];
            random.nextBytes(data);
            final int split = data.length == 0 ? 0 : random.nextInt(data.length + 1);
            assertEquals(crc(data, 0, data.length),
                Crc32c.combine(crc(data, 0, split), crc(data, split, data.length - split), data.length - split),
                "length " + data.length + " split at " + split);
        }
    }

    private static int crc(final byte[] data, final int offset, final int length) {
        final CRC32C crc = new CRC32C();
        crc.update(data, offset, length);
        return (int)crc.getValue();
    }
}
