package org.fanstore.runtime.fill;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.runtime.placement.Placement;

/**
 * What each rank keeps on its local disk for the job, and where the rest is read from (README.md, "What a node
 * keeps"): the partitions a rank holds and the broadcast ones first, then (with pulls) peers' partitions, owner
 * rank+1 first, first fit within the capacity. Pure arithmetic over the manifest, so every rank computes every
 * rank's plan (with its own capacity: the option is job-wide).
 */
public final class KeepPlan {
    private final List<FillScheduler.Part> kept;
    private final Map<Integer, PartitionInfo> infos;
    private final Map<Integer, int[]> streamedSources;
    private final long keptBytes;
    private final long peerBytes;
    private final long sharedFsBytes;

    private KeepPlan(List<FillScheduler.Part> kept, Map<Integer, PartitionInfo> infos,
                     Map<Integer, int[]> streamedSources, long keptBytes, long peerBytes, long sharedFsBytes) {
        this.kept = kept;
        this.infos = infos;
        this.streamedSources = streamedSources;
        this.keptBytes = keptBytes;
        this.peerBytes = peerBytes;
        this.sharedFsBytes = sharedFsBytes;
    }

    /** The partition id the runtime uses: regular p, or -1-i for broadcast partition i. */
    public static int id(PartitionInfo info) {
        return info.broadcast() ? -1 - info.index() : info.index();
    }

    /**
     * The plan of {@code rank}.
     *
     * @param capacity bytes of partitions a rank may keep
     * @param pulls whether ranks keep peers' partitions too (--prefetch on)
     */
    public static KeepPlan of(List<PartitionInfo> regular, List<PartitionInfo> broadcast, Placement placement,
                              int rank, long capacity, boolean pulls) {
        int size = placement.size();
        boolean[][] keeps = new boolean[size][];
        for (int r = 0; r < size; r++) {
            keeps[r] = keptBy(regular, broadcast, placement, r, capacity, pulls);
        }
        Map<Integer, PartitionInfo> infos = new LinkedHashMap<>();
        List<FillScheduler.Part> kept = new ArrayList<>();
        Map<Integer, int[]> streamed = new HashMap<>();
        long keptBytes = 0;
        long peerBytes = 0;
        long sharedBytes = 0;
        List<PartitionInfo> ordered = order(regular, broadcast, placement, rank, true);
        for (PartitionInfo info : ordered) {
            int p = id(info);
            infos.put(p, info);
            boolean mine = info.broadcast() || placement.holds(rank, info.index());
            int[] peers = info.broadcast() ? new int[0] : IntStream.of(placement.holders(info.index()))
                    .filter(h -> h != rank && keeps[h][info.index()]).toArray();
            if (keeps[rank][slot(info, regular.size())]) {
                int[] sources = mine ? new int[] {FillScheduler.HOME} : append(peers, FillScheduler.HOME);
                kept.add(new FillScheduler.Part(p, info.bytes(), sources));
                keptBytes += info.bytes();
            } else {
                streamed.put(p, append(peers, FillScheduler.HOME));
                if (peers.length > 0) {
                    peerBytes += info.bytes();
                } else {
                    sharedBytes += info.bytes();
                }
            }
        }
        return new KeepPlan(kept, infos, streamed, keptBytes, peerBytes, sharedBytes);
    }

    /** Which partitions (by {@link #slot}) rank r keeps: its order, first fit within capacity. */
    private static boolean[] keptBy(List<PartitionInfo> regular, List<PartitionInfo> broadcast, Placement placement,
                                    int r, long capacity, boolean pulls) {
        boolean[] keeps = new boolean[regular.size() + broadcast.size()];
        long left = capacity;
        for (PartitionInfo info : order(regular, broadcast, placement, r, pulls)) {
            if (info.bytes() <= left) {
                keeps[slot(info, regular.size())] = true;
                left -= info.bytes();
            }
        }
        return keeps;
    }

    /** Rank r's order: held regular partitions, broadcast ones, then (if {@code others}) owner r+1's, r+2's, ... */
    private static List<PartitionInfo> order(List<PartitionInfo> regular, List<PartitionInfo> broadcast,
                                             Placement placement, int r, boolean others) {
        List<PartitionInfo> out = new ArrayList<>();
        for (PartitionInfo p : regular) {
            if (placement.holds(r, p.index())) {
                out.add(p);
            }
        }
        out.addAll(broadcast);
        if (others) {
            List<PartitionInfo> rest = new ArrayList<>();
            for (PartitionInfo p : regular) {
                if (!placement.holds(r, p.index())) {
                    rest.add(p);
                }
            }
            int size = placement.size();
            rest.sort(Comparator.comparingInt((PartitionInfo p) -> Math.floorMod(placement.owner(p.index()) - r - 1,
                    size)).thenComparingInt(PartitionInfo::index));
            out.addAll(rest);
        }
        return out;
    }

    private static int slot(PartitionInfo info, int regularCount) {
        return info.broadcast() ? regularCount + info.index() : info.index();
    }

    private static int[] append(int[] a, int last) {
        int[] out = java.util.Arrays.copyOf(a, a.length + 1);
        out[a.length] = last;
        return out;
    }

    /** The partitions this rank keeps, in fill order, with their sources. */
    public List<FillScheduler.Part> kept() {
        return kept;
    }

    public PartitionInfo info(int p) {
        return infos.get(p);
    }

    /** Where a partition this rank does not keep is read from, in order (peers keeping it, then the shared FS). */
    public int[] streamedSources(int p) {
        int[] s = streamedSources.get(p);
        return s != null ? s : new int[] {FillScheduler.HOME};
    }

    /** Bytes this rank keeps locally. */
    public long keptBytes() {
        return keptBytes;
    }

    /** Bytes this rank does not keep that a peer keeps. */
    public long peerBytes() {
        return peerBytes;
    }

    /** Bytes no rank keeps: read from the shared FS on each access. */
    public long sharedFsBytes() {
        return sharedFsBytes;
    }
}
