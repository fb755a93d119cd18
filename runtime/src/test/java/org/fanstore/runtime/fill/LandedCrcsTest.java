package org.fanstore.runtime.fill;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/**
 * CRCs summed while a pull file's ranges land: any body's, and the whole file's, once every byte of it passed, in
 * whatever order the transfers came and however the transport cut them; unknown before; a retried transfer's bytes
 * replace a failed one's.
 */
class LandedCrcsTest {
    private static final int RANGE = 100;

    /** Bodies of 0-150 bytes, some with a gap before them (a header, padding), over a file of about 1,000 bytes. */
    private record Layout(byte[] file, long[] starts, long[] ends) {
        static Layout random(Random random) {
            List<long[]> bodies = new ArrayList<>();
            long at = random.nextInt(30);
            while (at < 950) {
                long length = random.nextInt(4) == 0 ? 0 : random.nextInt(1, 150);
                bodies.add(new long[] {at, Math.min(at + length, 1000)});
                at = Math.min(at + length, 1000) + (random.nextBoolean() ? random.nextInt(20) : 0);
            }
            byte[] file = new byte[(int) Math.max(at, 1000) + random.nextInt(2)];
            random.nextBytes(file);
            return new Layout(file, bodies.stream().mapToLong(b -> b[0]).toArray(),
                    bodies.stream().mapToLong(b -> b[1]).toArray());
        }

        LandedCrcs crcs() {
            return new LandedCrcs(file.length, RANGE, starts, ends);
        }

        int ranges() {
            return (file.length + RANGE - 1) / RANGE;
        }
    }

    private static long crc(byte[] b, long from, long to) {
        CRC32C c = new CRC32C();
        c.update(b, (int) from, (int) (to - from));
        return c.getValue();
    }

    /** Sends bytes [from, to) through crcs.summing into {@code into}, in pieces of 1-40 bytes. */
    private static void transfer(LandedCrcs crcs, byte[] bytes, int from, int to, byte[] into, Random random)
            throws IOException {
        WritableByteChannel summing = crcs.summing(new Place(into, from), from);
        for (int at = from; at < to; ) {
            int n = Math.min(to - at, random.nextInt(1, 40));
            ByteBuffer b = ByteBuffer.wrap(bytes, at, n);
            assertEquals(n, summing.write(b));
            assertEquals(0, b.remaining(), "the sink took every byte");
            at += n;
        }
    }

    @Test
    void everyBodysCrcAndTheWholeFilesAreKnownOnceTheirRangesLandedInAnyOrder() throws IOException {
        for (int seed = 0; seed < 200; seed++) {
            Random random = new Random(seed);
            Layout l = Layout.random(random);
            LandedCrcs crcs = l.crcs();
            List<int[]> runs = new ArrayList<>();         // {first range, count}: one transfer each
            for (int r = 0; r < l.ranges(); ) {
                int n = Math.min(l.ranges() - r, random.nextInt(1, 4));
                runs.add(new int[] {r, n});
                r += n;
            }
            Collections.shuffle(runs, random);
            byte[] landed = new byte[l.file().length];
            boolean[] done = new boolean[l.ranges()];
            for (int[] run : runs) {
                int from = run[0] * RANGE;
                int to = Math.min(l.file().length, (run[0] + run[1]) * RANGE);
                transfer(crcs, l.file(), from, to, landed, random);
                boolean allDone = true;
                for (int r = run[0]; r < run[0] + run[1]; r++) {
                    done[r] = true;
                }
                for (boolean d : done) {
                    allDone &= d;
                }
                if (!allDone) {
                    assertEquals(LandedCrcs.UNKNOWN, crcs.whole(), "seed " + seed + ": the whole file before its last"
                            + " range landed");
                }
                for (int i = 0; i < l.starts().length; i++) {
                    long s = l.starts()[i];
                    long e = l.ends()[i];
                    boolean all = true;
                    for (long r = s / RANGE; e > s && r <= (e - 1) / RANGE; r++) {
                        all &= done[(int) r];
                    }
                    assertEquals(all ? crc(l.file(), s, e) : LandedCrcs.UNKNOWN, crcs.crcOf(s, e - s),
                            "seed " + seed + " body [" + s + ", " + e + ")");
                }
            }
            assertArrayEquals(l.file(), landed, "seed " + seed + ": the bytes pass unchanged, each at its place");
            assertEquals(crc(l.file(), 0, l.file().length), crcs.whole(), "seed " + seed);
        }
    }

    @Test
    void aRetriedTransferReplacesWhatAFailedOneSummed() throws IOException {
        Random random = new Random(11);
        Layout l = Layout.random(random);
        LandedCrcs crcs = l.crcs();
        byte[] landed = new byte[l.file().length];
        byte[] wrong = l.file().clone();
        for (int i = 0; i < wrong.length; i++) {
            wrong[i] ^= 0x5A;
        }
        transfer(crcs, wrong, 0, 2 * RANGE - 30, landed, random);   // the first holder died mid-transfer
        transfer(crcs, l.file(), 0, l.file().length, landed, random);
        assertEquals(crc(l.file(), 0, l.file().length), crcs.whole());
        for (int i = 0; i < l.starts().length; i++) {
            assertEquals(crc(l.file(), l.starts()[i], l.ends()[i]), crcs.crcOf(l.starts()[i],
                    l.ends()[i] - l.starts()[i]));
        }
    }

    @Test
    void aTransferStartsOnlyAtARangeBoundaryAndOddBoundsAreNeverGuessed() throws IOException {
        LandedCrcs crcs = new LandedCrcs(250, RANGE, new long[] {10}, new long[] {120});
        assertThrows(IllegalArgumentException.class, () -> crcs.summing(new Place(new byte[250], 0), 50));
        byte[] file = new byte[250];
        new Random(3).nextBytes(file);
        transfer(crcs, file, 0, 250, new byte[250], new Random(4));
        assertEquals(crc(file, 10, 120), crcs.crcOf(10, 110));
        assertEquals(crc(file, 100, 200), crcs.crcOf(100, 100), "a run of whole pieces");
        assertEquals(LandedCrcs.UNKNOWN, crcs.crcOf(15, 20), "not a body's bounds");
        assertEquals(0, crcs.crcOf(37, 0), "an empty body");
    }

    /** Writes what it is given at consecutive places of an array. */
    private static final class Place implements WritableByteChannel {
        private final byte[] into;
        private int at;

        Place(byte[] into, int at) {
            this.into = into;
            this.at = at;
        }

        @Override
        public int write(ByteBuffer src) {
            int n = src.remaining();
            src.get(into, at, n);
            at += n;
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
        }
    }
}
