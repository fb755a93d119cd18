package org.fanstore.bench;

import static java.nio.charset.StandardCharsets.US_ASCII;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.fanstore.prep.format.table.LandedTable;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.prep.format.table.MetadataTableDescriptor;
import org.fanstore.prep.format.table.MetadataTableWriter;
import org.fanstore.prep.format.table.NamespaceEntry;

/**
 * {@code MetadataTableBench <out.tbl> [dirs] [files per dir]}: writes an ImageNet-shaped namespace
 * ({@code imagenet/train/n%08d/n%08d_%d.JPEG}, 1000 x 1300 files by default) as a metadata table, then reports
 * write time, bytes per file and Java lookups per second. The C side is measured by
 * interpose-native/bench/bench_meta_table.c on the same table (bench/metadata-table.sh runs both).
 * A plain main rather than JMH: the write is a one-shot cost, and the lookup loop is simple enough to time
 * directly after a warm-up pass.
 */
public final class MetadataTableBench {
    private MetadataTableBench() {
    }

    public static void main(final String[] args) throws Exception {
        final Path out = Path.of(args.length > 0 ? args[0] : "/dev/shm/fanstore-bench-meta.tbl");
        final Path dataset = out.resolveSibling(out.getFileName() + ".dataset");
        final int dirs = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        final int perDir = args.length > 2 ? Integer.parseInt(args[2]) : 1300;
        final List<NamespaceEntry> entries = new ArrayList<>(dirs * perDir);
        for (int d = 0; d < dirs; d++) {
            for (int f = 0; f < perDir; f++) {
                final byte[] key = String.format("imagenet/train/n%08d/n%08d_%d.JPEG", d, d, f).getBytes(US_ASCII);
                entries.add(NamespaceEntry.file(key, 0644, 110_000 + f, 1_700_000_000L + f, 0,
                    MetadataTableDescriptor.FLAG_UNPACKABLE, 0));
            }
        }
        final byte[] localRoot = "/tmp/fanstore-local".getBytes(US_ASCII);
        final int files = entries.size();
        final Runtime rt = Runtime.getRuntime();

        long bytes = 0;
        for (int run = 1; run <= 3; run++) {
            System.gc();
            final long heapBefore = rt.totalMemory() - rt.freeMemory();
            final long t0 = System.nanoTime();
            bytes = MetadataTableWriter.write(dataset, entries, run, 1, 0, 1);
            final double seconds = (System.nanoTime() - t0) / 1e9;
            final long heapAfter = rt.totalMemory() - rt.freeMemory();
            System.out.printf("write run %d: %d files in %.2f s (heap before %d MB, after %d MB, max %d MB)%n",
                run, files, seconds, heapBefore >> 20, heapAfter >> 20, rt.maxMemory() >> 20);
        }
        System.out.printf("table: %d bytes, %.1f bytes/file, %s%n", bytes, (double)bytes / files, dataset);
        final int crc;
        try (MetadataTable d = MetadataTable.openDataset(dataset)) {
            crc = d.recordedCrc();
        }
        final long landStart = System.nanoTime();
        LandedTable.copy(dataset, out, crc, 0, 1, 0, localRoot, 1);
        System.out.printf("land (read + CRC32C + job area, as one rank reading it itself): %.1f ms%n",
            (System.nanoTime() - landStart) / 1e6);
        Files.delete(dataset);

        final byte[][] keys = new byte[files][];
        for (int i = 0; i < files; i++) {
            keys[i] = entries.get(i).key();
        }
        final Random random = new Random(42);
        for (int i = files - 1; i > 0; i--) {
            final int j = random.nextInt(i + 1);
            final byte[] k = keys[i];
            keys[i] = keys[j];
            keys[j] = k;
        }
        try (MetadataTable table = MetadataTable.open(out)) {
            long sink = 0;
            for (int pass = 0; pass < 4; pass++) {
                final long t0 = System.nanoTime();
                for (final byte[] key : keys) {
                    sink += table.lookup(key);
                }
                final double seconds = (System.nanoTime() - t0) / 1e9;
                System.out.printf("java lookup pass %d: %.2f M lookups/s (%.0f ns each)%n", pass, files / seconds / 1e6,
                    seconds * 1e9 / files);
            }
            final long t0 = System.nanoTime();
            try (MetadataTable again = MetadataTable.open(out)) {
                sink += again.entryCount();
            }
            System.out.printf("java open+validate: %.1f ms (sink %d)%n", (System.nanoTime() - t0) / 1e6, sink);
        }
        Files.size(out);
    }
}
