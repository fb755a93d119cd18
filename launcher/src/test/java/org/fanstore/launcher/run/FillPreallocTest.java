package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionInfo;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A kept partition's fill file holds all its blocks, and the partition's full size, from its creation, before its
 * bytes land (runtime/.../fill/README.md, "The fill file's blocks"), end to end: 2 real rank JVMs behind a home
 * read at 4 MiB/s (bindfs), rank 0's command samples {@code stat} of its node's {@code .fill-*} files while the
 * fill runs, then reads every file through the shim and checks its SHA-256. A sparse fill file (the way before)
 * shows a size and blocks that grow with what landed.
 */
class FillPreallocTest {
    @TempDir
    Path work;

    @Test
    void fillFilesHoldTheirBlocksBeforeTheirBytesLandAndReadBackExact() throws Exception {
        FallocateProbe.assumeIn(work, "the fill files stay sparse there");
        Path src = work.resolve("src/pf");
        Files.createDirectories(src);
        Map<String, String> sums = new TreeMap<>();
        StringBuilder files = new StringBuilder();
        Random rnd = new Random(45);
        for (int i = 0; i < 32; i++) {
            byte[] body = new byte[384 * 1024 + 4093 * i];
            rnd.nextBytes(body);
            String name = String.format("f%03d.bin", i);
            Files.write(src.resolve(name), body);
            sums.put(name, HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body)));
            files.append(" /fanstore/pf/").append(name);
        }
        Path shared = Files.createDirectories(work.resolve("shared"));
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                shared.resolve("pf.fs").toString(), "--partitions", "4"));
        Map<String, Long> bytes = new HashMap<>();
        for (PartitionInfo info : Manifest.read(shared.resolve("pf.fs")).regularPartitions()) {
            bytes.put(".fill-" + info.fileName(), info.bytes());
        }
        Path home = Files.createDirectories(work.resolve("home"));
        Assumptions.assumeTrue(FillStressTest.bindfs(shared, home, "4M"), "bindfs could not mount");
        try {
            // samples every 50 ms until rank 0's fill ends (its marker), at most 60 s; a fill file renamed
            // between the -e test and stat (its partition complete) is not a sample
            String sample = "i=0; while [ ! -e \"$FANSTORE_SHM_DIR\"/../rank-0/prefetched ] && [ $i -lt 1200 ]; do"
                    + " for f in " + work + "/fanstore-*/rank-0/parts/.fill-*; do [ -e \"$f\" ] &&"
                    + " stat -c 'FILL %n %s %b %B' \"$f\" 2>/dev/null; done; sleep 0.05; i=$((i + 1)); done; ";
            String reads = "for f in" + files + "; do echo \"$(sha256sum < $f | cut -d' ' -f1)  $f\"; done"
                    + " > sums.txt";
            FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 180, "run", "--ranks",
                    "2", "--only-rank", "0", "--data", home.resolve("pf.fs").toString(), "--local-dir",
                    work.toString(), "--", "sh", "-c", sample + reads));
            List<String> seen = r.stdout().lines().filter(l -> l.startsWith("FILL ")).toList();
            assertFalse(seen.isEmpty(), "no fill file seen while rank 0's fill ran\n" + r.stdout() + r.stderr());
            for (String line : seen) {
                String[] f = line.split(" ");
                String name = Path.of(f[1]).getFileName().toString();
                long size = Long.parseLong(f[2]);
                long allocated = Long.parseLong(f[3]) * Long.parseLong(f[4]);
                assertTrue(bytes.containsKey(name), "a fill file of no partition: " + line);
                assertEquals(bytes.get(name), size, "the fill file's size is not the partition's: " + line);
                assertTrue(allocated >= size, "blocks not allocated before the bytes landed: " + line);
            }
            Map<String, String> got = new TreeMap<>();
            for (String line : Files.readAllLines(work.resolve("sums.txt"))) {
                String[] f = line.split(" +", 2);
                got.put(f[1].substring("/fanstore/pf/".length()), f[0]);
            }
            assertEquals(sums, got, r.stderr());
            assertFalse(r.stderr().contains("cannot"), r.stderr());
            System.out.printf("fill files preallocated: %d samples of %d files, every byte read back right%n",
                    seen.size(), seen.stream().map(l -> l.split(" ")[1]).distinct().count());
        } finally {
            FillStressTest.unmountFuse(home);
        }
    }
}
