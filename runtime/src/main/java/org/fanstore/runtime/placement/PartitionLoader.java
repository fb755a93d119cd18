package org.fanstore.runtime.placement;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import java.util.zip.CRC32C;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.PartitionReader;
import org.fanstore.runtime.layout.RankDirectory;

/**
 * Brings this rank's partitions from the shared file system to node-local storage, once: each partition is
 * copied sequentially (the only time the shared FS is read) and checked against the manifest's whole-file
 * CRC32C. Unpacking uncompressed files for direct opens is {@link Unpacker}'s job.
 */
public final class PartitionLoader {
    private final Path dataset;
    private final Manifest manifest;
    private final Path partsDir;
    private final Path filesDir;

    public PartitionLoader(Path dataset, Manifest manifest, Path localDir) throws IOException {
        this.dataset = dataset;
        this.manifest = manifest;
        this.partsDir = Files.createDirectories(RankDirectory.PARTS_DIR.in(localDir));
        this.filesDir = Files.createDirectories(RankDirectory.FILES_DIR.in(localDir));
    }

    /** Where partition copies lie: the ones copied at load and the ones pulled later. */
    public Path partsDir() {
        return partsDir;
    }

    /** Where LOCAL_RAW files lie: {@code <filesDir>/<key>}. */
    public Path filesDir() {
        return filesDir;
    }

    /** The partitions this rank holds: its regular ones (owner or replica) and every broadcast one. */
    public static List<PartitionInfo> heldBy(Manifest manifest, Placement placement, int rank) {
        List<PartitionInfo> out = new ArrayList<>();
        for (PartitionInfo p : manifest.regularPartitions()) {
            if (placement.holds(rank, p.index())) {
                out.add(p);
            }
        }
        out.addAll(manifest.broadcastPartitions());
        return out;
    }

    /** Copies and CRC-checks one partition; progress receives bytes as they are copied. */
    public PartitionReader copy(PartitionInfo info, LongConsumer progress) throws IOException {
        Path source = dataset.resolve(info.fileName());
        Path target = RankDirectory.PARTITION_COPY.in(partsDir, info.fileName());
        CRC32C crc = new CRC32C();
        long copied = PartitionCopy.copy(dataset, info, source, target, crc, progress);
        if (copied != info.bytes() || (int) crc.getValue() != info.crc32c()) {
            throw new IOException(String.format("partition %s in %s is damaged: %d bytes with CRC32C %08x, the"
                            + " manifest says %d bytes with %08x; run fanstore verify %s",
                    info.fileName(), dataset, copied, (int) crc.getValue(), info.bytes(), info.crc32c(), dataset));
        }
        PartitionReader reader = PartitionReader.open(target);
        if (reader.entries().size() != info.entries() || reader.index() != info.index()
                || reader.isBroadcast() != info.broadcast()) {
            String problem = String.format("partition %s in %s holds %d entries as %s partition %d, the manifest"
                            + " says %d entries as %s partition %d; run fanstore verify %s", info.fileName(), dataset,
                    reader.entries().size(), kind(reader.isBroadcast()), reader.index(), info.entries(),
                    kind(info.broadcast()), info.index(), dataset);
            reader.close();
            throw new IOException(problem);
        }
        return reader;
    }

    private static String kind(boolean broadcast) {
        return broadcast ? "broadcast" : "regular";
    }
}
