package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.fanstore.prep.format.PartitionInfo;
import org.junit.jupiter.api.Test;

/** The puller's read-ahead rule: in-order readers get the next ranges once each, random ones nothing. */
class ReadAheadTest {
    private static final int[] NONE = {};

    @Test
    void readersInFileOrderGetTheNextRangesOnceEach() {
        ReadAhead ahead = new ReadAhead(2);
        assertArrayEquals(NONE, ahead.read(7, 0, 10), "a first read says nothing about order");
        assertArrayEquals(new int[] {1, 2}, ahead.read(7, 0, 10), "a second read in the same range: in order");
        assertArrayEquals(NONE, ahead.read(7, 0, 10), "named once, however many reads follow");
        assertArrayEquals(new int[] {3}, ahead.read(7, 1, 10), "the next range moves the window by one");
        assertArrayEquals(new int[] {4}, ahead.read(7, 2, 10));
        assertArrayEquals(NONE, ahead.read(3, 5, 10), "partitions are apart");
        assertArrayEquals(new int[] {5}, ahead.read(7, 3, 10));
    }

    @Test
    void theWindowStopsAtTheLastRange() {
        ReadAhead ahead = new ReadAhead(2);
        ahead.read(0, 7, 9);
        assertArrayEquals(new int[] {8}, ahead.read(0, 7, 9));
        assertArrayEquals(NONE, ahead.read(0, 8, 9));
    }

    @Test
    void readsInRandomOrderRarelyPullAhead() {
        ReadAhead ahead = new ReadAhead(2);
        Random random = new Random(42);
        int named = 0;
        for (int i = 0; i < 1000; i++) {
            named += ahead.read(1, random.nextInt(64), 64).length;
        }
        // a random read lands on the last range or the next one about 2 times in 64
        assertTrue(named < 200, "ranges named ahead for 1000 random reads of 64 ranges: " + named);
    }

    @Test
    void aSequentialReaderGetsEveryRangeAheadExactlyOnce() {
        ReadAhead ahead = new ReadAhead(2);
        List<Integer> named = new ArrayList<>();
        for (int range = 0; range < 20; range++) {
            for (int file = 0; file < 4; file++) {     // four 128 KiB files per 508 KiB range
                for (int r : ahead.read(2, range, 20)) {
                    named.add(r);
                }
            }
        }
        List<Integer> expected = new ArrayList<>();
        for (int r = 1; r < 20; r++) {
            expected.add(r);
        }
        assertEquals(expected, named);
    }

    /** A partition of {@code ranges} ranges of 100 bytes, nothing started. */
    private static PullFile file(int index, int ranges) {
        return new PullFile(new PartitionInfo(index, "part-" + index, 100L * ranges, 0, 1, false), null, null, 100);
    }

    @Test
    void theBackgroundFollowsEveryPartitionsReadersBreadthFirst() {
        ReadAhead ahead = new ReadAhead(2);
        PullFile a = file(1, 10);
        PullFile b = file(2, 10);
        PullFile unread = file(3, 10);
        List<PullFile> active = List.of(unread, a, b);
        assertNull(ahead.behindReaders(active), "no reader yet: the usual front-to-back order");
        ahead.passed(1, 5);                        // large files: readers are at range 5 of a, 3 of b
        ahead.passed(2, 3);
        List<String> order = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            int[] next = ahead.behindReaders(active);
            PullFile f = next[0] == 1 ? a : b;
            f.started(next[1]);
            order.add(next[0] + ":" + next[1]);
        }
        assertEquals(List.of("1:5", "2:3", "1:6", "2:4", "1:7", "2:5"), order,
                "each partition just ahead of its readers, nearest gap first, never the unread one's front");
        assertTrue(unread.todo(0));
    }

    @Test
    void aPartitionPulledToItsEndBehindItsReadersGivesWayToTheUsualOrder() {
        ReadAhead ahead = new ReadAhead(2);
        PullFile a = file(1, 4);
        ahead.read(1, 2, 4);
        a.started(2);
        a.started(3);
        assertNull(ahead.behindReaders(List.of(a)), "nothing to start after the mark (the front is the usual order's)");
        a.started(1);
        ahead.read(1, 0, 4);                      // a reader back at the front (a new directory, a second reader)
        assertArrayEquals(new int[] {1, 0}, ahead.behindReaders(List.of(a)));
    }

    @Test
    void rangesFarAheadOfTheReadersAreLeftToTheUsualOrder() {
        ReadAhead ahead = new ReadAhead(2);
        PullFile a = file(1, ReadAhead.BEHIND_WINDOW + 10);
        for (int r = 0; r < ReadAhead.BEHIND_WINDOW; r++) {
            a.started(r);
        }
        ahead.passed(1, 0);
        assertNull(ahead.behindReaders(List.of(a)), "the next range to start is a window past the readers");
        ahead.passed(1, 1);
        assertArrayEquals(new int[] {1, ReadAhead.BEHIND_WINDOW}, ahead.behindReaders(List.of(a)));
    }
}
