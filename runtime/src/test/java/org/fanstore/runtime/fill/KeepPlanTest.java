package org.fanstore.runtime.fill;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.runtime.placement.Placement;
import org.junit.jupiter.api.Test;

/** What a rank keeps: its own partitions first, then peers' in ring order, first fit; the rest streamed. */
class KeepPlanTest {
    private static final int FS = FillScheduler.HOME;
    /** Four regular partitions of 100..400 bytes over 2 ranks (rank 0 owns 0 and 2), one broadcast of 50. */
    private static final List<PartitionInfo> REGULAR = List.of(info(0, 100), info(1, 200), info(2, 300),
            info(3, 400));
    private static final List<PartitionInfo> BROADCAST = List.of(new PartitionInfo(0, "b-0.fsp", 50, 0, 1, true));

    private static PartitionInfo info(int p, long bytes) {
        return new PartitionInfo(p, "part-" + p + ".fsp", bytes, 0, 1, false);
    }

    private static List<Integer> ids(KeepPlan plan) {
        return plan.kept().stream().map(FillScheduler.Part::id).toList();
    }

    @Test
    void everythingFitsOwnFirstThenPeersFromTheOwner() {
        KeepPlan plan = KeepPlan.of(REGULAR, BROADCAST, new Placement(2, 0), 0, 10_000, true);
        assertEquals(List.of(0, 2, -1, 1, 3), ids(plan));
        assertArrayEquals(new int[] {FS}, plan.kept().get(0).sources());
        assertArrayEquals(new int[] {1, FS}, plan.kept().get(3).sources(), "a peer's: its owner, then the FS");
        assertEquals(1050, plan.keptBytes());
        assertEquals(0, plan.peerBytes() + plan.sharedFsBytes());
    }

    @Test
    void aSmallCapacityKeepsWhatFitsFirstFitAndStreamsTheRest() {
        KeepPlan plan = KeepPlan.of(REGULAR, BROADCAST, new Placement(2, 0), 0, 360, true);
        // own 0 (100) fits, own 2 (300) does not, broadcast (50) fits, peer 1 (200) fits: 350
        assertEquals(List.of(0, -1, 1), ids(plan));
        assertEquals(350, plan.keptBytes());
        // rank 1 with the same capacity keeps its own 1 (200), not 3 (400): 3 is on no node, 2 on none either
        assertArrayEquals(new int[] {FS}, plan.streamedSources(3));
        assertArrayEquals(new int[] {FS}, plan.streamedSources(2));
        assertEquals(700, plan.sharedFsBytes());
    }

    @Test
    void withoutPullsOnlyTheRanksOwnAreKeptAndPeersServeTheirs() {
        KeepPlan plan = KeepPlan.of(REGULAR, BROADCAST, new Placement(2, 0), 0, 10_000, false);
        assertEquals(List.of(0, 2, -1), ids(plan));
        assertArrayEquals(new int[] {1, FS}, plan.streamedSources(1));
        assertEquals(600, plan.peerBytes());
    }
}
