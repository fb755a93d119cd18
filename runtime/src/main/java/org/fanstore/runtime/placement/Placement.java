package org.fanstore.runtime.placement;

import java.util.ArrayList;
import java.util.List;

/**
 * Which partitions a rank holds. Regular partition p is owned by rank {@code p % size}; with k replicas the
 * ranks {@code owner+1 .. owner+k} (mod size) hold copies too, so a rank's replica set is the partitions of
 * the k ranks before it. Broadcast partitions are held by every rank. Pure arithmetic: every rank computes
 * every other rank's placement without asking, which is what lets an entry's holders be known from its
 * partition number alone.
 */
public final class Placement {
    private final int size;
    private final int replicas;

    public Placement(int size, int replicas) {
        if (size < 1) {
            throw new IllegalArgumentException("world size must be >= 1, got " + size);
        }
        if (replicas < 0 || replicas >= size && replicas > 0) {
            throw new IllegalArgumentException("--replicas must be between 0 and " + (size - 1) + " for "
                    + size + " ranks, got " + replicas);
        }
        this.size = size;
        this.replicas = replicas;
    }

    public int size() {
        return size;
    }

    public int owner(int partition) {
        return partition % size;
    }

    /** True when rank holds regular partition p (as owner or replica). */
    public boolean holds(int rank, int partition) {
        int distance = Math.floorMod(rank - owner(partition), size);
        return distance <= replicas;
    }

    /** The ranks holding partition p: the owner first, then its replicas in order. */
    public int[] holders(int partition) {
        int[] out = new int[replicas + 1];
        for (int i = 0; i <= replicas; i++) {
            out[i] = (owner(partition) + i) % size;
        }
        return out;
    }

    /** The regular partitions rank holds, ascending. */
    public List<Integer> partitionsOf(int rank, int partitionCount) {
        List<Integer> out = new ArrayList<>();
        for (int p = 0; p < partitionCount; p++) {
            if (holds(rank, p)) {
                out.add(p);
            }
        }
        return out;
    }
}
