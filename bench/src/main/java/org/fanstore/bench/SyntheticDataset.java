package org.fanstore.bench;

import static java.nio.charset.StandardCharsets.US_ASCII;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

import org.fanstore.prep.format.Compression;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.PartitionWriter;
import org.fanstore.prep.format.table.DatasetTable;

/**
 * {@code SyntheticDataset OUT.fs NAME FILES PARTITIONS [DIRS]}: writes a dataset of FILES tiny files (ImageNet's
 * shape: 1,300 per directory under train/, or spread evenly over DIRS directories: 21,841 for ImageNet-21k) straight
 * into partitions, without a source tree, then its manifest and
 * metadata table exactly as prep does ({@link DatasetTable}). For namespaces too large to create as real files on
 * one machine (10M entries: the load benchmark). Directory d and its files go to partition d % PARTITIONS, each
 * partition's entries in path order as the format requires; the dataset root and train/ go to partition 0.
 */
public final class SyntheticDataset {
    private static final int PER_DIR = 1300;
    private static final int BODY = 32;
    private static final long MTIME = 1_700_000_000L;

    private SyntheticDataset() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 4 && args.length != 5) {
            System.err.println("usage: SyntheticDataset OUT.fs NAME FILES PARTITIONS [DIRS]");
            System.exit(2);
        }
        Path out = Path.of(args[0]);
        byte[] name = args[1].getBytes(US_ASCII);
        long files = Long.parseLong(args[2]);
        int partitions = Integer.parseInt(args[3]);
        Files.createDirectories(out);
        long dirs = args.length == 5 ? Long.parseLong(args[4]) : (files + PER_DIR - 1) / PER_DIR;
        long started = System.nanoTime();
        List<PartitionInfo> infos = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            infos.add(writePartition(out, p, partitions, files, dirs));
        }
        long written = System.nanoTime();
        long raw = files * BODY;
        Manifest manifest = new Manifest(name, files, dirs + 2, 0, raw, raw, Compression.NONE, List.of(), infos);
        manifest = DatasetTable.write(out, manifest);
        manifest.write(out);
        System.out.printf("synthetic: %d files in %d directories, %d partitions: partitions %.1f s, table %.1f s"
                + " (%d bytes, %.1f bytes/file)%n", files, dirs, partitions, (written - started) / 1e9,
                (System.nanoTime() - written) / 1e9, manifest.table().bytes(),
                manifest.table().bytes() / (double) files);
    }

    private static PartitionInfo writePartition(Path out, int p, int partitions, long files, long dirs)
            throws IOException {
        long entries = 0;
        long tableLength = 0;
        if (p == 0) {
            entries += 2;
            tableLength += PartitionDescriptor.entryLength(0) + PartitionDescriptor.entryLength(dirPath(-1).length);
        }
        for (long d = p; d < dirs; d += partitions) {
            entries++;
            tableLength += PartitionDescriptor.entryLength(dirPath(d).length);
            for (long i = first(d, files, dirs); i < first(d + 1, files, dirs); i++) {
                entries++;
                tableLength += PartitionDescriptor.entryLength(filePath(d, i).length);
            }
        }
        Path file = out.resolve(PartitionDescriptor.regularFileName(p));
        byte[] body = new byte[BODY];
        PartitionWriter.Written w;
        try (PartitionWriter writer = PartitionWriter.create(file, p, false, entries, tableLength)) {
            if (p == 0) {
                writer.addDirectory(dir(new byte[0]));
                writer.addDirectory(dir(dirPath(-1)));
            }
            for (long d = p; d < dirs; d += partitions) {
                writer.addDirectory(dir(dirPath(d)));
                for (long i = first(d, files, dirs); i < first(d + 1, files, dirs); i++) {
                    for (int k = 0; k < BODY; k++) {
                        body[k] = (byte) (i * 31 + k);
                    }
                    CRC32C crc = new CRC32C();
                    crc.update(body);
                    writer.addBody(new PartitionEntry(filePath(d, i), PartitionDescriptor.TYPE_FILE,
                            PartitionDescriptor.CODEC_RAW, 0100644, 0, 0, MTIME, 0, BODY, BODY, 0, 0),
                            PartitionDescriptor.CODEC_RAW, BODY, (int) crc.getValue(), body, BODY);
                }
            }
            w = writer.finish();
        }
        return new PartitionInfo(p, file.getFileName().toString(), w.fileBytes(), w.crc32c(), w.entries(), false);
    }

    /** The first file of directory d: 1,300 per directory, or (DIRS given) spread evenly, in order. */
    private static long first(long d, long files, long dirs) {
        if (dirs == (files + PER_DIR - 1) / PER_DIR) {
            return Math.min(files, d * PER_DIR);
        }
        return Math.min(files, (long) ((double) d * files / dirs + 0.5));
    }

    private static PartitionEntry dir(byte[] path) {
        return new PartitionEntry(path, PartitionDescriptor.TYPE_DIRECTORY, PartitionDescriptor.CODEC_RAW, 040755, 0, 0,
                MTIME, 0, 0, 0, 0, 0);
    }

    /** train/ for -1, else train/nDDDDDDDD. */
    private static byte[] dirPath(long d) {
        return (d < 0 ? "train" : String.format("train/n%08d", d)).getBytes(US_ASCII);
    }

    private static byte[] filePath(long d, long i) {
        return String.format("train/n%08d/n%08d_%08d.JPEG", d, d, i).getBytes(US_ASCII);
    }
}
