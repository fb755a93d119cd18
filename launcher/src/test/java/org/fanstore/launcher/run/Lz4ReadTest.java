package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.fanstore.launcher.badinput.PartitionSurgery;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionReader;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compressed reads end to end (issue 8 item 6): LZ4 files at the sizes where the decoder's chunks and windows
 * change, read through the shim by four processes at once on their first open, each getting the bytes prep saw;
 * the runtime decodes each file once (its statistics say so); a damaged compressed body is EIO and the log names
 * the file and the partition copy.
 */
class Lz4ReadTest {
    private static final int CHUNK = PartitionDescriptor.LZ4_CHUNK_RAW_LENGTH;
    private static final int[] SIZES = {0, 1, 64 * 1024 - 1, 128 * 1024, CHUNK, CHUNK + 1, 2 * CHUNK, 2 * CHUNK + 1};
    private static final int READERS = 4;

    @TempDir
    Path work;

    @Test
    void concurrentFirstOpensGetTheRightBytesFromOneDecodeEach() throws Exception {
        Path src = work.resolve("src/lz");
        Files.createDirectories(src);
        Map<String, String> sums = new TreeMap<>();
        for (int size : SIZES) {
            byte[] body = SampleDataset.compressibleText(size);
            String name = "f" + size + ".csv";
            Files.write(src.resolve(name), body);
            sums.put(name, HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body)));
        }
        Path data = work.resolve("lz.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                data.toString(), "--partitions", "2", "--compress", "lz4"));
        int compressed = 0;
        long storedBytes = 0;
        long keptRaw = 0;
        long smallestCompressed = Long.MAX_VALUE;
        for (int p = 0; p < 2; p++) {
            try (PartitionReader r = PartitionReader.open(data.resolve(String.format("part-%05d.fsp", p)))) {
                for (PartitionEntry e : r.entries()) {
                    if (e.isFile() && e.codec() == PartitionDescriptor.CODEC_LZ4_CHUNKED) {
                        compressed++;
                        storedBytes += e.storedLength();
                        smallestCompressed = Math.min(smallestCompressed, e.storedLength());
                    } else if (e.isFile()) {
                        keptRaw += e.storedLength();   // read at most once per reader (below)
                    }
                }
            }
        }
        assertTrue(compressed >= SIZES.length - 3, "prep stored only " + compressed + " files compressed");

        StringBuilder files = new StringBuilder();
        for (String name : sums.keySet()) {
            files.append(" /fanstore/lz/").append(name);
        }
        // Every reader starts with the same file, so first opens of one file meet in the runtime. Each file is opened
        // by the shell (stdin of sha256sum): a file prep kept raw is then a slice and costs the runtime no read, while
        // sha256sum's own fopen would have it copied out of the partition (stdio never gets a slice).
        String readers = "for i in $(seq " + READERS + "); do (for f in" + files + "; do"
                + " echo \"$(sha256sum < $f | cut -d' ' -f1)  $f\"; done > sums-$i.txt) & done; wait";
        Path stats = work.resolve("stats.json");
        // --unpack lazy: no background pass decodes ahead, so the readers' first opens are what decode each file
        // into its partition's decoded copy (docs/slices.md), once, while the others wait for it
        FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "run", "--ranks", "1",
                "--unpack", "lazy", "--data", data.toString(), "--local-dir", work.toString(), "--stats",
                stats.toString(), "--", "sh", "-c", readers));
        for (int i = 1; i <= READERS; i++) {
            Map<String, String> got = new TreeMap<>();
            for (String line : Files.readAllLines(work.resolve("sums-" + i + ".txt"))) {
                String[] f = line.split(" +", 2);
                got.put(f[1].substring("/fanstore/lz/".length()), f[0]);
            }
            assertEquals(sums, got, "reader " + i + "\n" + r.stderr());
        }
        String json = Files.readString(stats);
        assertEquals(compressed, JsonField.first(json, "decompressed"), "decodes (one per compressed file)\n" + json);
        // Every compressed body is read once, by the open that decodes it (one decode each, above). A file prep kept
        // raw has no such rule, and need not: concurrent first opens while its partition fills may each serve it by a
        // path of their own (a slice of the fill file, a copy from the landed ranges into the cache), each reading its
        // few bytes; once the partition is complete its bodies were checked by the fill's sums, and an open that
        // publishes it as a slice reads nothing. So the bytes the runtime read for opens, from the local copy or the
        // fill's ranges (fetched), are every compressed body once plus each raw body at most once per reader: a
        // compressed body read twice, or not at all, falls outside. An open of an entry published before it reads
        // nothing (CI once saw a raw file counted by every later open).
        long read = JsonField.first(json, "local_read_by_runtime") + JsonField.first(json, "fetched");
        assertTrue(read >= storedBytes && read <= storedBytes + READERS * keptRaw, "every compressed body read"
                + " once: " + read + " bytes read, " + storedBytes + " compressed + " + keptRaw + " kept raw ("
                + READERS + " readers)\n" + json);
        assertTrue(READERS * keptRaw < smallestCompressed, "the raw files' slack is below any compressed body");
    }

    /**
     * Right after ready, while the fill still copies the partitions in from a slow home (bindfs at 2 MiB/s), each
     * reader's first open of an LZ4 file decodes it from its landed ranges straight into its partition's decoded copy
     * and reads it as a slice (docs/slices.md, "compressed riders"). The path before answered every such open with a
     * copy of its own in the cache (a pin each, counted as remote); now no open is a pin or remote, and the readers'
     * opens decoded files themselves. Two readers at once, every byte SHA-256-checked.
     */
    @Test
    void firstOpensWhileTheFillRunsDecodeIntoTheDecodedCopy() throws Exception {
        Path src = work.resolve("src/tx");
        Files.createDirectories(src);
        Map<String, String> sums = new TreeMap<>();
        StringBuilder files = new StringBuilder();
        for (int i = 0; i < 120; i++) {
            byte[] body = SampleDataset.compressibleText(128 * 1024 - i);
            String name = String.format("t%03d.csv", i);
            Files.write(src.resolve(name), body);
            sums.put(name, HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body)));
            files.append(" /fanstore/tx/").append(name);
        }
        Path home = Files.createDirectories(work.resolve("home"));
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                home.resolve("tx.fs").toString(), "--partitions", "2", "--compress", "lz4"));
        Path mnt = Files.createDirectories(work.resolve("mnt"));
        Assumptions.assumeTrue(FillStressTest.bindfs(home, mnt, "2M"), "bindfs could not mount " + home);
        try {
            String readers = "for i in 1 2; do (for f in" + files + "; do"
                    + " echo \"$(sha256sum < $f | cut -d' ' -f1)  $f\"; done > sums-$i.txt) & done; wait";
            Path stats = work.resolve("stats.json");
            FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "run", "--ranks", "1",
                    "--data", mnt.resolve("tx.fs").toString(), "--local-dir", work.toString(), "--stats",
                    stats.toString(), "--", "sh", "-c", readers));
            for (int i = 1; i <= 2; i++) {
                Map<String, String> got = new TreeMap<>();
                for (String line : Files.readAllLines(work.resolve("sums-" + i + ".txt"))) {
                    String[] f = line.split(" +", 2);
                    got.put(f[1].substring("/fanstore/tx/".length()), f[0]);
                }
                for (Map.Entry<String, String> e : sums.entrySet()) {
                    assertEquals(e.getValue(), got.get(e.getKey()), "reader " + i + ", " + e.getKey() + "\n"
                            + r.stderr());
                }
                assertEquals(sums.size(), got.size(), "reader " + i);
            }
            String json = Files.readString(stats);
            assertEquals(0, JsonField.first(json, "pins"), "opens answered with a copy in the cache\n" + json);
            assertEquals(0, JsonField.first(json, "remote"), "opens served through the cache from the fill\n" + json);
            assertTrue(JsonField.first(json, "decompressed") > 0, "no reader rode the fill\n" + json);
        } finally {
            FillStressTest.unmountFuse(mnt);
        }
    }

    /**
     * Each decoded copy has every block allocated when it is made, before any file is decoded into it (one
     * fallocate instead of a delayed allocation per new page: docs/slices.md), and the files decoded into it then
     * read back exact. Two ranks, each keeping its own partitions and pulling the other's; --unpack lazy, so nothing
     * is decoded before the reader's first opens. The command waits for both fills, records each of rank 0's decoded
     * copies' size and allocated bytes, then reads every file through the shim, SHA-256-checked. A sparse copy (the
     * way before) holds one block at this point and fails the allocation check.
     */
    @Test
    void decodedCopiesHoldTheirBlocksBeforeTheFirstDecodeAndReadBackExact() throws Exception {
        FallocateProbe.assumeIn(work, "the copies stay sparse there");
        Path src = work.resolve("src/pa");
        Files.createDirectories(src);
        Map<String, String> sums = new TreeMap<>();
        StringBuilder files = new StringBuilder();
        for (int i = 0; i < 48; i++) {
            byte[] body = SampleDataset.compressibleText(96 * 1024 + 37 * i);
            String name = String.format("p%03d.csv", i);
            Files.write(src.resolve(name), body);
            sums.put(name, HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body)));
            files.append(" /fanstore/pa/").append(name);
        }
        Path data = work.resolve("pa.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                data.toString(), "--partitions", "4", "--compress", "lz4"));
        String afterFills = "i=0; while [ \"$(ls \"$FANSTORE_SHM_DIR\"/../rank-*/prefetched 2>/dev/null | wc -l)\""
                + " -lt 2 ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done; ";
        String copies = "for c in " + work + "/fanstore-*/rank-0/parts/*.fsp.raw; do"
                + " echo \"COPY $(stat -c '%s %b %B' \"$c\") $c\"; done; ";
        String reads = "for f in" + files + "; do echo \"$(sha256sum < $f | cut -d' ' -f1)  $f\"; done > sums.txt";
        FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 180, "run", "--ranks", "2",
                "--only-rank", "0", "--unpack", "lazy", "--data", data.toString(), "--local-dir", work.toString(),
                "--", "sh", "-c", afterFills + copies + reads));
        List<String> made = r.stdout().lines().filter(l -> l.startsWith("COPY ")).toList();
        assertEquals(4, made.size(), "a decoded copy per partition on rank 0 (2 kept, 2 pulled)\n" + r.stdout()
                + r.stderr());
        for (String line : made) {
            String[] f = line.split(" ");
            long size = Long.parseLong(f[1]);
            long allocated = Long.parseLong(f[2]) * Long.parseLong(f[3]);
            assertTrue(size > 0 && allocated >= size, "blocks not allocated before the first decode: " + line);
        }
        Map<String, String> got = new TreeMap<>();
        for (String line : Files.readAllLines(work.resolve("sums.txt"))) {
            String[] f = line.split(" +", 2);
            got.put(f[1].substring("/fanstore/pa/".length()), f[0]);
        }
        assertEquals(sums, got, r.stderr());
        assertFalse(r.stderr().contains("cannot"), r.stderr());
    }

    @Test
    void aDamagedCompressedBodyIsEioNamingThePartition() throws Exception {
        PartitionSurgery s = PartitionSurgery.golden();
        int pattern = s.entry("data/pattern.txt");
        assertEquals(PartitionDescriptor.CODEC_LZ4_CHUNKED,
                s.part()[s.field(pattern, PartitionDescriptor.CODEC_OFFSET)], "golden pattern.txt is LZ4");
        // A byte inside the first LZ4 block: the block then fails to decode or decodes to other bytes.
        s.part()[(int) s.body(pattern) + PartitionDescriptor.LZ4_CHUNK_HEADER_LENGTH + 3] ^= 0x41;
        Path data = s.forgeManifest().writeTo(work.resolve("bad-lz4.fs"));
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of(), 120, "run", "--ranks", "1", "--data",
                data.toString(), "--local-dir", work.toString(), "--", "sh", "-c",
                "cat /fanstore/golden/data/pattern.txt > out.txt; echo status $?");
        assertTrue(r.stdout().contains("status 1"), r.stdout() + r.stderr());
        assertEquals(0, Files.size(work.resolve("out.txt")), "bytes of a damaged body were served");
        assertTrue(r.stderr().contains("Input/output error"), r.stderr());
        assertTrue(r.stderr().contains("data/pattern.txt") && r.stderr().contains(PartitionSurgery.PARTITION),
                r.stderr());
        assertFalse(r.stderr().contains("Exception"), r.stderr());
    }
}
