package org.fanstore.prep.format.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

/** The columnar writer input's two building blocks: the chunked key arena and the index sort. */
class KeyArenaAndIndexSortTest {
    @Test
    void recordsComeBackWholeAcrossChunksAndOversized() {
        final KeyArena arena = new KeyArena();
        final Random random = new Random(44);
        final List<byte[]> records = new ArrayList<>();
        final List<Long> addresses = new ArrayList<>();
        for (int i = 0; i < 40_000; i++) {
            // mostly short keys, some that leave a chunk's end unused, one past the chunk size
            final int length = i == 20_000 ? (1 << 20) + 17 : i % 97 == 0 ? 3000 + random.nextInt(2000) :
                random.nextInt(80);
            final byte[] key = new byte[length];
            random.nextBytes(key);
            final byte[] target = i % 5 == 0 ? new byte[] {(byte)i, 1, 2} : null;
            addresses.add(arena.add(key, target));
            records.add(target == null ? key : concat(key, target));
        }
        for (int i = 0; i < records.size(); i++) {
            final long at = addresses.get(i);
            final int from = KeyArena.position(at);
            final byte[] chunk = arena.chunk(at);
            assertArrayEquals(records.get(i), Arrays.copyOfRange(chunk, from, from + records.get(i).length),
                "record " + i);
        }
        assertTrue((addresses.get(39_999) >>> 32) > 2, "the records spread over several chunks");
    }

    @Test
    void sortsLikeAStableSortOverRunsTiesAndRandomData() {
        final Random random = new Random(7);
        for (final int n : new int[] {0, 1, 2, 31, 32, 33, 1000, 100_003}) {
            final int[] values = new int[n];
            for (int i = 0; i < n; i++) {
                // runs of ascending values (as partitions arrive) broken by random ones and many ties
                values[i] = i % 1000 < 700 ? i % 1000 : random.nextInt(300);
            }
            final int[] perm = IndexSort.sort(n, (a, b) -> Integer.compare(values[a], values[b]));
            final Integer[] expected = new Integer[n];
            for (int i = 0; i < n; i++) {
                expected[i] = i;
            }
            Arrays.sort(expected, Comparator.comparingInt(i -> values[i]));   // stable: ties keep index order
            assertArrayEquals(Arrays.stream(expected).mapToInt(Integer::intValue).toArray(), perm, "n = " + n);
        }
    }

    private static byte[] concat(final byte[] a, final byte[] b) {
        final byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
