package org.fanstore.runtime.fill;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.fanstore.runtime.fileblocks.Preallocate;
import org.fanstore.runtime.placement.BodyCheck;
import org.fanstore.runtime.placement.BodyIndex;

/**
 * The fill files' lifecycle (README.md, the diagram): a kept partition's {@link FillFile} is created on its first
 * transfer, installed as a local partition once complete and checked, or dropped when it is given up (removed, or
 * only its unread pages punched out where slices read it). The map is guarded by {@link Fill}'s lock.
 */
final class FillFiles {
    /** What an abandoned fill file keeps around each slice read from it: whole pages. */
    private static final long PAGE = 4096;

    private final Fill fill;
    private final Path partsDir;
    private final BodyIndex bodies;
    private final BodyCheck check;
    private final Map<Integer, int[]> entriesOf;
    private final Map<Integer, FillFile> files = new HashMap<>();

    FillFiles(Fill fill, Path partsDir, BodyIndex bodies, BodyCheck check, Set<Integer> kept) {
        this.fill = fill;
        this.partsDir = partsDir;
        this.bodies = bodies;
        this.check = check;
        this.entriesOf = entriesOf(bodies, kept);
    }

    /** Partition p's fill file, or null before its first transfer (holding the lock). */
    FillFile get(int p) {
        return files.get(p);
    }

    /**
     * The partition's fill file, created on its first transfer (the driver thread, before it starts that transfer)
     * with all its blocks allocated, or sparse where the file system cannot (README.md, "The fill file's blocks").
     */
    FillFile file(int p) throws IOException {
        FillFile f;
        synchronized (fill.lock) {
            f = files.get(p);
            if (f != null) {
                return f;
            }
            var info = fill.plan().info(p);
            Path tmp = partsDir.resolve(".fill-" + info.fileName());
            FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
            int[] entries = entriesOf.getOrDefault(p, new int[0]);
            f = new FillFile(info, p, tmp, out, entries, LandedCrcs.of(info, Fill.RANGE_BYTES, bodies, entries));
            files.put(p, f);
        }
        if (f.info.bytes() > 0) {
            Preallocate.blocks(f.tmp, f.info.bytes());   // outside the lock; false: sparse, as before
        }
        return f;
    }

    /** The name kept partition p's complete copy has in the parts directory. */
    Path target(int p) {
        return partsDir.resolve(fill.plan().info(p).fileName());
    }

    /** Checks the whole file and renames it into place as a local partition; throws if it is not the manifest's. */
    void install(FillFile f) throws IOException {
        Path target = target(f.id);
        long sum = f.crcs.whole();
        int crc = sum != LandedCrcs.UNKNOWN ? (int) sum : BodyCheck.crc32c(f.channel, 0, f.info.bytes());
        if (f.channel.size() != f.info.bytes() || crc != f.info.crc32c()) {
            throw new IOException(String.format("filled %d bytes with CRC32C %08x, the manifest says %d bytes"
                    + " with %08x", f.channel.size(), crc, f.info.bytes(), f.info.crc32c()));
        }
        boolean sliced;
        synchronized (fill.lock) {
            sliced = f.sliced;
            f.closed = true;                 // no new slice of the fill file's name from here on
        }
        if (sliced) {
            Files.createLink(target, f.tmp); // a second name: slices published while it filled name f.tmp
        } else {
            Files.move(f.tmp, target, StandardCopyOption.ATOMIC_MOVE);
        }
        fill.local.add(f.id, target);
    }

    /** Records the bodies of an installed file as checked, from the CRCs summed as its ranges landed. */
    void settle(FillFile f) throws IOException {
        f.crcs.settle(bodies, f.entries, check);
    }

    /**
     * An abandoned partition's file: removed, or (slices read it) its other bytes punched out. {@code why} it was
     * given up is logged with what stays; null: nothing to log (said already, or the job is ending).
     */
    void drop(FillFile f, String why) {
        if (f == null) {
            return;
        }
        boolean keep;
        List<long[]> unread;
        synchronized (fill.lock) {
            f.closed = true;
            keep = f.sliced;
            unread = keep ? f.unkeptPages(PAGE) : List.of();
        }
        if (keep) {
            try {
                long freed = PunchHoles.punch(f.tmp, unread);
                if (why != null && !fill.stopping) {
                    System.err.println("fanstore rank " + fill.rank + ": " + f.tmp.getFileName() + " stays until the"
                            + " job ends (files are read in place from it; given up: " + why + "); its other "
                            + freed + " bytes are freed");
                }
            } catch (IOException e) {
                // the file stays whole until the job's directory goes
            }
            return;
        }
        try {
            Files.deleteIfExists(f.tmp);   // a reader still reading it keeps its open channel
        } catch (IOException e) {
            System.err.println("fanstore rank " + fill.rank + ": cannot remove " + f.tmp + ": " + e.getMessage());
        }
    }

    /** At the end of the job: every file not a local partition is dropped, and every channel closed. */
    void closeAll() {
        List<FillFile> all;
        synchronized (fill.lock) {
            all = new ArrayList<>(files.values());
        }
        for (FillFile f : all) {
            if (!fill.local.holds(f.id)) {
                drop(f, null);
            }
            try {
                f.channel.close();
            } catch (IOException e) {
                // the job is ending
            }
        }
    }

    /** The entries with a body in each of the partitions {@code ids}, in table order (one pass over the table). */
    private static Map<Integer, int[]> entriesOf(BodyIndex bodies, Set<Integer> ids) {
        Map<Integer, IntStream.Builder> lists = new HashMap<>();
        for (int i = 0; i < bodies.entries(); i++) {
            int p = bodies.partition(i);
            if (p != BodyIndex.NO_BODY && ids.contains(p)) {
                lists.computeIfAbsent(p, k -> IntStream.builder()).add(i);
            }
        }
        Map<Integer, int[]> out = new HashMap<>();
        lists.forEach((p, b) -> out.put(p, b.build().toArray()));
        return out;
    }
}
