package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class PlacementTest {

    @Test
    void everyPartitionHasExactlyOneOwnerWithoutReplicas() {
        Placement placement = new Placement(4, 0);
        int[] held = new int[10];
        for (int rank = 0; rank < 4; rank++) {
            for (int p : placement.partitionsOf(rank, 10)) {
                held[p]++;
                assertEquals(rank, placement.owner(p));
            }
        }
        for (int count : held) {
            assertEquals(1, count);
        }
    }

    @Test
    void replicasGoToTheFollowingRanks() {
        Placement placement = new Placement(4, 2);
        assertArrayEquals(new int[] {3, 0, 1}, placement.holders(7));
        assertEquals(List.of(0, 2, 3, 4, 6, 7), placement.partitionsOf(0, 8));
        for (int p = 0; p < 8; p++) {
            for (int holder : placement.holders(p)) {
                assertTrue(placement.holds(holder, p));
            }
        }
    }

    @Test
    void replicasMustLeaveRoomInTheWorld() {
        assertThrows(IllegalArgumentException.class, () -> new Placement(2, 2));
        assertThrows(IllegalArgumentException.class, () -> new Placement(0, 0));
    }
}
