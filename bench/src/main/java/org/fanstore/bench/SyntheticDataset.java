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
import org.fanstore.prep.format.TableInfo;
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
    static final long MTIME = 1_700_000_000L;
    static final int FILE_MODE = 0100644;
    private static final int PER_DIR = 1300;
    private static final int BODY = 32;
    private static final byte[] TRAIN_N = "train/n".getBytes(US_ASCII);
    private static final byte[] JPEG = ".JPEG".getBytes(US_ASCII);

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
        long dirs = args.length == 5 ? Long.parseLong(args[4]) : (files + PER_DIR - 1) / PER_DIR;
        write(out, name, files, partitions, dirs, !Boolean.getBoolean("fanstore.synthetic.prepWriter"));
    }

    /**
     * Writes the dataset; {@code streamed}: its table through {@link SyntheticTable} as the partitions are written
     * (memory: the bucket array), else through prep's writer ({@link DatasetTable}: every entry on the heap).
     */
    static Manifest write(Path out, byte[] name, long files, int partitions, long dirs, boolean streamed)
            throws IOException {
        Files.createDirectories(out);
        long started = System.nanoTime();
        List<PartitionInfo> infos = new ArrayList<>();
        List<PartitionInfo> named = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            named.add(new PartitionInfo(p, PartitionDescriptor.regularFileName(p), 0, 0, 0, false));
        }
        long raw = files * BODY;
        long datasetId = new Manifest(name, files, dirs + 2, 0, raw, raw, Compression.NONE, List.of(), named)
                .datasetId();
        Manifest manifest;
        long written;
        if (streamed) {
            try (SyntheticTable table = SyntheticTable.create(out.resolve(TableInfo.FILE_NAME), name, files, dirs,
                    partitions, datasetId)) {
                for (int p = 0; p < partitions; p++) {
                    infos.add(writePartition(out, p, partitions, files, dirs, table));
                }
                written = System.nanoTime();
                manifest = new Manifest(name, files, dirs + 2, 0, raw, raw, Compression.NONE, List.of(), infos)
                        .withTable(table.publish());
            }
        } else {
            for (int p = 0; p < partitions; p++) {
                infos.add(writePartition(out, p, partitions, files, dirs, null));
            }
            written = System.nanoTime();
            manifest = DatasetTable.write(out,
                    new Manifest(name, files, dirs + 2, 0, raw, raw, Compression.NONE, List.of(), infos));
        }
        if (manifest.datasetId() != datasetId) {
            throw new IllegalStateException("synthetic: dataset id changed once the partitions were written");
        }
        manifest.write(out);
        System.out.printf("synthetic: %d files in %d directories, %d partitions, table %s: partitions%s %.1f s,"
                + " table %.1f s (%d bytes, %.1f bytes/file)%n", files, dirs, partitions,
                streamed ? "streamed" : "by prep's writer", streamed ? " (and the table's entries)" : "",
                (written - started) / 1e9, (System.nanoTime() - written) / 1e9, manifest.table().bytes(),
                manifest.table().bytes() / (double) files);
        return manifest;
    }

    private static PartitionInfo writePartition(Path out, int p, int partitions, long files, long dirs,
            SyntheticTable table) throws IOException {
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
                            PartitionDescriptor.CODEC_RAW, FILE_MODE, 0, 0, MTIME, 0, BODY, BODY, 0, 0),
                            PartitionDescriptor.CODEC_RAW, BODY, (int) crc.getValue(), body, BODY);
                }
            }
            w = writer.finish();
        }
        if (table != null) {
            table.partition(p, w.table());
        }
        return new PartitionInfo(p, file.getFileName().toString(), w.fileBytes(), w.crc32c(), w.entries(), false);
    }

    /** The first file of directory d: 1,300 per directory, or (DIRS given) spread evenly, in order. */
    static long first(long d, long files, long dirs) {
        if (dirs == (files + PER_DIR - 1) / PER_DIR) {
            return Math.min(files, d * PER_DIR);
        }
        return Math.min(files, (long) ((double) d * files / dirs + 0.5));
    }

    static PartitionEntry dir(byte[] path) {
        return new PartitionEntry(path, PartitionDescriptor.TYPE_DIRECTORY, PartitionDescriptor.CODEC_RAW, 040755, 0, 0,
                MTIME, 0, 0, 0, 0, 0);
    }

    /** train/ for -1, else train/nDDDDDDDD. */
    static byte[] dirPath(long d) {
        if (d < 0) {
            return "train".getBytes(US_ASCII);
        }
        byte[] b = new byte[7 + digits(d)];
        System.arraycopy(TRAIN_N, 0, b, 0, 7);
        decimal(b, b.length, d);
        return b;
    }

    /** train/nDDDDDDDD/nDDDDDDDD_IIIIIIII.JPEG (as String.format("%08d") would pad them, without its cost). */
    static byte[] filePath(long d, long i) {
        int dd = digits(d);
        int di = digits(i);
        byte[] b = new byte[7 + dd + 2 + dd + 1 + di + 5];
        System.arraycopy(TRAIN_N, 0, b, 0, 7);
        int at = 7 + dd;
        decimal(b, at, d);
        b[at++] = '/';
        b[at++] = 'n';
        at += dd;
        decimal(b, at, d);
        b[at++] = '_';
        at += di;
        decimal(b, at, i);
        System.arraycopy(JPEG, 0, b, at, 5);
        return b;
    }

    private static int digits(long v) {
        int n = 1;
        for (long x = v; x >= 10; x /= 10) {
            n++;
        }
        return Math.max(8, n);
    }

    /** Writes v's decimal digits ending just before {@code end}, zero-padded back to its digits() width. */
    private static void decimal(byte[] b, int end, long v) {
        long x = v;
        for (int k = end - 1, n = digits(v); n > 0; k--, n--) {
            b[k] = (byte) ('0' + x % 10);
            x /= 10;
        }
    }
}
