package org.fanstore.prep;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PathBytes;

/**
 * Which entry goes to which partition. Files and symlinks are balanced by bytes with a deterministic greedy
 * rule: largest first (ties by path bytes) to the least-loaded partition (ties to the lowest index). Every
 * directory goes to regular partition 0; files under a --broadcast directory go to the broadcast partition.
 * Each partition's list is in table order (unsigned path bytes).
 */
record PartitionPlan(List<List<SourceEntry>> regular, List<List<SourceEntry>> broadcast)
{
    /** Sizes only: the sort is stable and its input is in path order, so ties stay in path order. */
    private static final Comparator<SourceEntry> LARGEST_FIRST = (a, b) -> Long.compare(b.size(), a.size());

    /** {@code sortedEntries} must be in table order (unsigned path bytes); each partition list keeps it. */
    static PartitionPlan balance(final Collection<SourceEntry> sortedEntries, final int partitions,
        final List<byte[]> broadcastDirs)
    {
        final List<SourceEntry> toBalance = new ArrayList<>();
        for (final SourceEntry e : sortedEntries)
        {
            if (!e.isDir() && !isBroadcast(e.path(), broadcastDirs))
            {
                toBalance.add(e);
            }
        }
        toBalance.sort(LARGEST_FIRST);
        final long[] load = new long[partitions];
        final PriorityQueue<Integer> leastLoaded = new PriorityQueue<>(Math.max(1, partitions),
            (a, b) -> load[a] != load[b] ? Long.compare(load[a], load[b]) : Integer.compare(a, b));
        for (int p = 0; p < partitions; p++)
        {
            leastLoaded.add(p);
        }
        final Map<SourceEntry, Integer> assigned = new IdentityHashMap<>(toBalance.size() * 2);
        for (final SourceEntry e : toBalance)
        {
            final int p = leastLoaded.poll();
            assigned.put(e, p);
            load[p] += e.size();
            leastLoaded.add(p);
        }

        final List<List<SourceEntry>> regular = emptyLists(partitions);
        final List<SourceEntry> toBroadcast = new ArrayList<>();
        for (final SourceEntry e : sortedEntries)
        {
            final Integer p = assigned.get(e);
            if (p != null)
            {
                regular.get(p).add(e);
            }
            else if (e.isDir())
            {
                regular.get(0).add(e);
            }
            else
            {
                toBroadcast.add(e);
            }
        }
        final List<List<SourceEntry>> broadcast = toBroadcast.isEmpty() ? List.of() : List.of(toBroadcast);
        return new PartitionPlan(regular, broadcast);
    }

    /** Bytes of the table for these entries. */
    static long tableLength(final List<SourceEntry> entries)
    {
        long length = 0;
        for (final SourceEntry e : entries)
        {
            length += PartitionDescriptor.entryLength(e.path().length);
        }
        return length;
    }

    private static boolean isBroadcast(final byte[] path, final List<byte[]> broadcastDirs)
    {
        for (final byte[] dir : broadcastDirs)
        {
            if (PathBytes.isWithin(path, dir))
            {
                return true;
            }
        }
        return false;
    }

    private static List<List<SourceEntry>> emptyLists(final int count)
    {
        final List<List<SourceEntry>> lists = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            lists.add(new ArrayList<>());
        }
        return lists;
    }
}
