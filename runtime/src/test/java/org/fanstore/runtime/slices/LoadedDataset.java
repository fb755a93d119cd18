package org.fanstore.runtime.slices;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fanstore.prep.DatasetPacker;
import org.fanstore.prep.PrepOptions;
import org.fanstore.prep.PrepProgress;
import org.fanstore.prep.format.Compression;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.table.LandedTable;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.runtime.placement.BodyIndex;
import org.fanstore.runtime.placement.BodyCheck;
import org.fanstore.runtime.placement.LocalPartitions;
import org.fanstore.runtime.placement.Placement;

/**
 * A real dataset packed with LZ4 as prep does, loaded as rank 0 of {@code ranks}: its own partitions copied and
 * added, the dataset's table landed as rank 0's, the body check attached. The other ranks' partition files are
 * copied too, not added ({@link #othersFiles}): what rank 0's puller would bring in later.
 */
final class LoadedDataset implements AutoCloseable {
    final Manifest manifest;
    final MetadataTable table;
    final BodyIndex bodies;
    final LocalPartitions local;
    final BodyCheck check;
    /** Partition id -> the copied file, for the partitions other ranks hold, in placement order. */
    final Map<Integer, Path> othersFiles;

    private LoadedDataset(Manifest manifest, MetadataTable table, LocalPartitions local, BodyCheck check,
                          Map<Integer, Path> othersFiles) {
        this.manifest = manifest;
        this.table = table;
        this.bodies = new BodyIndex(table);
        this.local = local;
        this.check = check;
        this.othersFiles = othersFiles;
    }

    /**
     * {@code count} compressible text files {@code f00}, {@code f01}... under {@code root}/src/ds, each {@code lines}
     * lines naming its number, packed and loaded as {@link #lz4}.
     */
    static LoadedDataset lz4Texts(Path root, int count, int lines, int partitions, int ranks) throws Exception {
        Path src = Files.createDirectories(root.resolve("src/ds"));
        for (int i = 0; i < count; i++) {
            Files.writeString(src.resolve(String.format("f%02d", i)), ("line " + i + " of a text\n").repeat(lines));
        }
        return lz4(root, src, partitions, ranks);
    }

    /** Packs {@code src} into {@code root}/ds.fs in {@code partitions} LZ4 partitions and loads it under root. */
    static LoadedDataset lz4(Path root, Path src, int partitions, int ranks) throws Exception {
        Path data = root.resolve("ds.fs");
        DatasetPacker.prep(new PrepOptions(src, data, null, partitions, Compression.LZ4, List.of(), 1, null, false,
                false), PrepProgress.silent(), line -> { });
        Manifest manifest = Manifest.read(data);
        Placement placement = new Placement(ranks, 0);
        Path parts = Files.createDirectories(root.resolve("local/parts"));
        Path filesDir = Files.createDirectories(root.resolve("local/files"));
        LocalPartitions local = new LocalPartitions();
        try {
            Map<Integer, Path> others = new LinkedHashMap<>();
            for (int rank = 0; rank < ranks; rank++) {
                for (PartitionInfo info : manifest.regularPartitions()) {
                    if (!placement.holds(rank, info.index())) {
                        continue;
                    }
                    Path copy = parts.resolve(info.fileName());
                    Files.copy(data.resolve(info.fileName()), copy);
                    if (rank == 0) {
                        local.add(info.index(), copy);
                    } else {
                        others.put(info.index(), copy);
                    }
                }
            }
            Path landed = root.resolve("meta.table");
            LandedTable.copy(data.resolve(manifest.table().fileName()), landed, manifest.table().crc32c(), 0, ranks,
                    0, filesDir.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8), 1);
            MetadataTable table = MetadataTable.open(landed);
            BodyIndex bodies = new BodyIndex(table);
            local.attach(bodies);
            BodyCheck check = new BodyCheck(table, bodies, local, 0, data.toString());
            local.attach(check);
            return new LoadedDataset(manifest, table, local, check, others);
        } catch (Exception | Error e) {
            local.close();
            throw e;
        }
    }

    @Override
    public void close() throws IOException {
        try {
            table.close();
        } finally {
            local.close();
        }
    }
}
