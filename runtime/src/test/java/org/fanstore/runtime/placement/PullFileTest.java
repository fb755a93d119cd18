package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.fanstore.prep.format.PartitionInfo;
import org.junit.jupiter.api.Test;

/**
 * Which bytes a reader riding a pull may read: only those inside ranges that landed, never one in flight; and which
 * an abandoned pull file may give back: every whole page no slice handed out touches.
 */
class PullFileTest {
    private static PullFile file(long bytes) {
        return new PullFile(new PartitionInfo(7, "part-00007.fsp", bytes, 0, 1, false), null, null, 100);
    }

    @Test
    void aBodyIsReadableOnlyOnceEveryRangeItTouchesLanded() {
        PullFile f = file(350);                 // ranges [0,100) [100,200) [200,300) [300,350)
        assertEquals(4, f.ranges());
        assertEquals(50, f.length(3));
        f.started(1);
        assertFalse(f.covers(120, 10), "in flight is not landed");
        f.landed(1);
        assertTrue(f.covers(120, 10));
        assertTrue(f.covers(100, 100), "exactly the landed range");
        assertFalse(f.covers(150, 60), "spills into range 2");
        assertFalse(f.covers(99, 2), "starts in range 0");
        f.started(2);
        f.landed(2);
        assertTrue(f.covers(150, 60));
        assertTrue(f.covers(200, 0), "an empty body at a landed offset");
        assertFalse(f.complete());
    }

    @Test
    void theBackgroundOrderSkipsRangesReadersAlreadyStarted() {
        PullFile f = file(350);
        f.started(0);
        assertEquals(1, f.firstTodo(50, 200), "a body over ranges 0-2: range 0 is on its way");
        f.started(2);                            // a reader's range, out of order
        assertEquals(1, f.nextTodo());
        assertEquals(-1, f.firstTodo(200, 100), "range 2 alone: nothing left to start");
        f.started(1);
        assertEquals(3, f.nextTodo());
        f.started(3);
        assertEquals(-1, f.nextTodo());
        for (int r = 0; r < 4; r++) {
            f.landed(r);
        }
        assertTrue(f.complete());
        assertEquals(3, f.rangeOf(10_000), "past the end clamps to the last range");
    }

    @Test
    void anAbandonedFileKeepsEveryPageASliceTouchesAndNothingElse() {
        PullFile none = file(10_000);
        assertHoles(List.of(new long[] {0, 12_288}), none.unkeptPages(4096), "nothing kept: every page goes");

        PullFile f = file(40_000);              // pages [0,4096) ... [36864,40960)
        f.keep(20_000, 100);                   // page 4 only
        f.keep(5_000, 4_000);                  // pages 1-2 (5000..8999)
        f.keep(8_192, 10);                     // page 2 again, out of order and overlapping
        f.keep(39_990, 10);                    // the last, partial page
        assertHoles(List.of(new long[] {0, 4096}, new long[] {12_288, 4096}, new long[] {20_480, 16_384}),
                f.unkeptPages(4096), "the gaps between kept pages");

        PullFile all = file(8_192);
        all.keep(0, 8_192);
        assertEquals(0, all.unkeptPages(4096).size(), "all kept: no hole");
    }

    private static void assertHoles(List<long[]> expected, List<long[]> got, String what) {
        assertEquals(expected.size(), got.size(), what);
        for (int i = 0; i < expected.size(); i++) {
            assertArrayEquals(expected.get(i), got.get(i), what + ", hole " + i);
        }
    }
}
