package org.fanstore.bench;

import static java.nio.charset.StandardCharsets.US_ASCII;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import org.fanstore.prep.format.Compression;
import org.fanstore.prep.format.Lz4Chunked;
import org.fanstore.prep.format.table.Fnv1a64;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.prep.format.table.MetadataTableDescriptor;
import org.fanstore.prep.format.table.MetadataTableWriter;
import org.fanstore.prep.format.table.NamespaceEntry;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * JMH for the runtime's hot Java paths (bench/run-paper.sh runs it): what a compressed open costs in the
 * runtime (LZ4 decode of a 128 KiB body + its CRC32C), the metadata table lookup and the key hash.
 * Average time per operation, in nanoseconds.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HotPathsBench {
    private static final int TABLE_FILES = 100_000;
    private static final int BODY = 128 << 10;

    private Path dir;
    private MetadataTable table;
    private byte[][] keys;
    private int next;
    private byte[] lz4Body;
    private byte[] rawBody;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("fanstore-jmh");
        final List<NamespaceEntry> entries = new ArrayList<>(TABLE_FILES);
        keys = new byte[TABLE_FILES][];
        for (int i = 0; i < TABLE_FILES; i++) {
            keys[i] = String.format("ds/train/n%08d/n%08d_%d.JPEG", i / 1300, i / 1300, i).getBytes(US_ASCII);
            entries.add(NamespaceEntry.file(keys[i], 0644, 110_000, 1_700_000_000L, 0,
                MetadataTableDescriptor.FLAG_UNPACKABLE, 0));
        }
        final Path tbl = dir.resolve("namespace.tbl");
        MetadataTableWriter.write(tbl, entries, 1, 1, 0, 1);
        table = MetadataTable.openDataset(tbl);
        // Text rows like the benchmark's compressible set (LZ4 ratio ~2.5-3).
        final SplittableRandom rnd = new SplittableRandom(7);
        final StringBuilder sb = new StringBuilder(BODY + 64);
        while (sb.length() < BODY) {
            sb.append("2026-11-").append(1 + rnd.nextInt(30)).append(",n").append(10_000_000 + rnd.nextInt(90))
                .append(rnd.nextBoolean() ? ",train," : ",val,").append(rnd.nextInt(100)).append('\n');
        }
        rawBody = sb.substring(0, BODY).getBytes(US_ASCII);
        final Lz4Chunked.Encoder enc = Lz4Chunked.encoder(Compression.LZ4);
        final byte[] dst = new byte[(int) enc.maxEncodedLength(BODY)];
        final int n = enc.encode(rawBody, 0, BODY, dst, 0);
        lz4Body = java.util.Arrays.copyOf(dst, n);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        table.close();
        try (var s = Files.walk(dir)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** The runtime's share of a compressed open: decode the body and check its CRC32C. */
    @Benchmark
    public long lz4DecodeAndCrc128K() throws IOException {
        final byte[] raw = Lz4Chunked.decode(lz4Body, BODY);
        final CRC32C crc = new CRC32C();
        crc.update(raw, 0, raw.length);
        return crc.getValue();
    }

    /** CRC32C alone over 128 KiB (a remote fetch's check). */
    @Benchmark
    public long crc32c128K() {
        final CRC32C crc = new CRC32C();
        crc.update(rawBody, 0, rawBody.length);
        return crc.getValue();
    }

    /** Java-side lookup in a 100k-entry metadata table. */
    @Benchmark
    public int tableLookup() {
        final int i = next;
        next = i + 7919 >= TABLE_FILES ? (i + 7919) - TABLE_FILES : i + 7919;
        return table.lookup(keys[i]);
    }

    @Benchmark
    public long fnv1a64Key() {
        final int i = next;
        next = i + 1 == TABLE_FILES ? 0 : i + 1;
        return Fnv1a64.hash(keys[i]);
    }
}
