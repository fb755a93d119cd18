package org.fanstore.prep;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.function.Consumer;

import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PathBytes;
import org.fanstore.prep.format.table.IndexSort;

/**
 * Which entry goes to which partition. There are at most as many regular partitions as files and symlinks to
 * balance (at least one, which holds the directories). Files and symlinks are balanced by bytes with a
 * deterministic greedy rule: largest first (ties by path bytes) to the least-loaded partition (ties to the
 * lowest index). Every directory goes to regular partition 0; files under a --broadcast directory go to the
 * broadcast partition. Each partition's list is in table order (unsigned path bytes).
 */
record PartitionPlan(List<List<SourceEntry>> regular, List<List<SourceEntry>> broadcast) {
    /** Files and symlinks to balance, largest first; ties by position in table order. */
    private static int largestFirst(final SourceEntry[] all, final int a, final int b) {
        final long sa = all[a].size();
        final long sb = all[b].size();
        return sa != sb ? Long.compare(sb, sa) : Integer.compare(a, b);
    }

    /** {@code sortedEntries} must be in table order (unsigned path bytes); each partition list keeps it. */
    static PartitionPlan balance(final Collection<SourceEntry> sortedEntries, final int requested,
        final List<byte[]> broadcastDirs) {
        // Arrays indexed by table position rather than maps keyed by entry: this runs on the main thread
        // before any byte is written, once per file.
        final SourceEntry[] all = sortedEntries.toArray(new SourceEntry[0]);
        // Table positions of the files to balance, then an index sort of them (12 bytes per file, where an object
        // per file took 28 while every walk object is held).
        final int[] toBalance = new int[all.length];
        int count = 0;
        for (int i = 0; i < all.length; i++) {
            final SourceEntry e = all[i];
            if (!e.isDir() && !isBroadcast(e.path(), broadcastDirs)) {
                toBalance[count++] = i;
            }
        }
        final int[] order = IndexSort.sort(count, (a, b) -> largestFirst(all, toBalance[a], toBalance[b]));
        // An empty partition is a file every run copies for nothing: never more partitions than entries to hold.
        final int partitions = Math.min(requested, Math.max(1, count));
        final int[] partitionOf = new int[all.length];
        Arrays.fill(partitionOf, -1);
        final PartitionLoads loads = new PartitionLoads(partitions);
        for (int k = 0; k < count; k++) {
            final int position = toBalance[order[k]];
            partitionOf[position] = loads.least();
            loads.addToLeast(all[position].size());
        }

        final List<List<SourceEntry>> regular = emptyLists(partitions);
        final List<SourceEntry> toBroadcast = new ArrayList<>();
        for (int i = 0; i < all.length; i++) {
            final SourceEntry e = all[i];
            if (partitionOf[i] >= 0) {
                regular.get(partitionOf[i]).add(e);
            } else if (e.isDir()) {
                regular.get(0).add(e);
            } else {
                toBroadcast.add(e);
            }
        }
        final List<List<SourceEntry>> broadcast = toBroadcast.isEmpty() ? List.of() : List.of(toBroadcast);
        return new PartitionPlan(regular, broadcast);
    }

    /** Entries in all partitions (before {@link PartitionPipeline#writeAll} empties the lists). */
    long entryCount() {
        long count = 0;
        for (final List<List<SourceEntry>> kind : List.of(regular, broadcast)) {
            for (final List<SourceEntry> partition : kind) {
                count += partition.size();
            }
        }
        return count;
    }

    /** Says so when {@code plan} has fewer regular partitions than {@code --partitions} asked for. */
    static void warnIfFewer(final PartitionPlan plan, final int requested, final Consumer<String> warnings) {
        final int made = plan.regular().size();
        if (made < requested) {
            warnings.accept("--partitions " + requested + " is more than the " + made + " file(s) and symlink(s) " +
                "to spread: writing " + made + " partition(s)");
        }
    }

    /** Bytes of the table for these entries. */
    static long tableLength(final List<SourceEntry> entries) {
        long length = 0;
        for (final SourceEntry e : entries) {
            length += PartitionDescriptor.entryLength(e.path().length);
        }
        return length;
    }

    private static boolean isBroadcast(final byte[] path, final List<byte[]> broadcastDirs) {
        for (final byte[] dir : broadcastDirs) {
            if (PathBytes.isWithin(path, dir)) {
                return true;
            }
        }
        return false;
    }

    private static List<List<SourceEntry>> emptyLists(final int count) {
        final List<List<SourceEntry>> lists = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            lists.add(new ArrayList<>());
        }
        return lists;
    }
}
