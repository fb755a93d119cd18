package org.fanstore.launcher.run;

import static org.fanstore.prep.format.PartitionDescriptor.STORED_LENGTH_OFFSET;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.fanstore.launcher.badinput.PartitionSurgery;
import org.fanstore.runtime.layout.RankDirectory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 10 item 12: a partition whose bytes were changed together with the manifest's whole-file CRC (so the copy
 * check passes) is still never served: each body's CRC32C, which the metadata table prep built records, stops it on
 * the owner, for its own readers and for the other rank's, and `run` checks the manifest's counts against the table.
 */
class DoctoredDatasetTest {
    @TempDir
    static Path work;

    @Test
    void aDoctoredBodyIsEioOnEveryRankAndTheLogNamesTheFile() throws Exception {
        PartitionSurgery s = PartitionSurgery.golden();
        int hello = s.entry("data/hello.txt");
        s.part()[(int) s.body(hello)] ^= 0x20;   // "hello" -> "Hello": same length, wrong bytes
        Path data = s.forgeManifest().writeTo(work.resolve("doctored.fs"));
        String job = "tdoc" + System.nanoTime();
        // Rank 0 owns the only partition (a local, uncompressed file: the direct-open path), rank 1 fetches it.
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 120, "run", "--ranks",
                "2", "--data", data.toString(), "--local-dir", work.toString(), "--", "sh", "-c",
                "cat /fanstore/golden/data/hello.txt > out-$FANSTORE_RANK.txt; echo rank $FANSTORE_RANK status $?");
        assertTrue(r.stdout().contains("rank 0 status 1") && r.stdout().contains("rank 1 status 1"),
                r.stdout() + r.stderr());
        assertEquals(0, Files.size(work.resolve("out-0.txt")), "rank 0 was served bytes");
        assertEquals(0, Files.size(work.resolve("out-1.txt")), "rank 1 was served bytes");
        assertEquals(2, r.stderr().lines().filter(l -> l.contains("Input/output error")).count(), r.stderr());
        assertTrue(r.stderr().contains("data/hello.txt in the local copy of part-00000.fsp"), r.stderr());
        assertNothingLeft(job);
    }

    /**
     * Rank 1 pulls the partition (its whole-file CRC passes: the manifest was forged) and reads only once the pull
     * is done, so the body is judged on rank 1's own copy, not by a fetch from rank 0. The partition holds raw bodies
     * only (a partition with an LZ4 body gets a decoded copy, which checks every body as it copies): what judges it is
     * the CRC summed while its bytes landed. The doctored file is refused, the one beside it served.
     */
    @Test
    void aDoctoredBodyInAPulledPartitionIsRefusedByTheCrcSummedAsItLanded() throws Exception {
        Path src = work.resolve("raw-src/set");
        Files.createDirectories(src);
        Files.writeString(src.resolve("hello.txt"), "hello, fanstore\n");
        Files.writeString(src.resolve("leaf.txt"), "leaf\n");
        FanstoreProcess.Result prep = FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(),
                "--output", work.resolve("raw.fs").toString(), "--partitions", "1", "--compress", "none");
        assertEquals(0, prep.status(), prep.stderr());
        PartitionSurgery s = PartitionSurgery.of(work.resolve("raw.fs"));
        int hello = s.entry("hello.txt");
        s.part()[(int) s.body(hello)] ^= 0x20;
        Path data = s.forgeManifest().writeTo(work.resolve("doctored-pulled.fs"));
        String job = "tdocp" + System.nanoTime();
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job, "FANSTORE_VERBOSE", "1"),
                120, "run", "--ranks", "2", "--data", data.toString(), "--local-dir", work.toString(), "--", "sh", "-c",
                "if [ $FANSTORE_RANK = 1 ]; then for k in $(seq 600); do [ -e \"$FANSTORE_SHM_DIR/prefetched\" ]"
                        + " && break; sleep 0.05; done; cat /fanstore/set/hello.txt > /dev/null;"
                        + " echo hello status $?; cat /fanstore/set/leaf.txt; fi");
        assertTrue(r.stdout().contains("hello status 1"), r.stdout() + r.stderr());
        assertTrue(r.stderr().contains("fanstore rank 1: fill done in "), "the fill finished: " + r.stderr());
        assertTrue(r.stderr().contains("fanstore rank 1: set/hello.txt in the local copy of part-00000.fsp: its"
                + " bytes have CRC32C"), r.stderr());
        assertTrue(r.stdout().lines().anyMatch("leaf"::equals), "the good file beside it: " + r.stdout());
        assertNothingLeft(job);
    }

    @Test
    void aDoctoredCompressedBodyIsEioToo() throws Exception {
        PartitionSurgery s = PartitionSurgery.golden();
        int pattern = s.entry("data/pattern.txt");
        // The last stored byte: inside an LZ4 block's literals, so the body still decodes, to the wrong bytes,
        // which only the body's CRC32C in the metadata table can tell.
        long last = s.body(pattern) + s.headerLong(s.field(pattern, STORED_LENGTH_OFFSET)) - 1;
        s.part()[(int) last] ^= 0x20;
        Path data = s.forgeManifest().writeTo(work.resolve("doctored-lz4.fs"));
        String job = "tdoclz" + System.nanoTime();
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 120, "run", "--ranks",
                "2", "--data", data.toString(), "--local-dir", work.toString(), "--", "sh", "-c",
                "cat /fanstore/golden/data/pattern.txt > /dev/null; echo rank $FANSTORE_RANK status $?");
        assertTrue(r.stdout().contains("rank 0 status 1") && r.stdout().contains("rank 1 status 1"),
                r.stdout() + r.stderr());
        assertTrue(r.stderr().contains("data/pattern.txt"), r.stderr());
        assertNothingLeft(job);
    }

    @Test
    void runChecksTheManifestsFileCount() throws Exception {
        Path data = PartitionSurgery.golden().manifestLine("files", "files 4000000000")
                .writeTo(work.resolve("count.fs"));
        String job = "tcount" + System.nanoTime();
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 120, "run", "--ranks",
                "1", "--data", data.toString(), "--local-dir", work.toString(), "--", "true");
        assertNotEquals(0, r.status(), r.stderr());
        assertTrue(r.stderr().contains("says 4000000000 files") && r.stderr().contains("table holds 4,"),
                r.stderr());
        assertFalse(r.stderr().contains("Exception"), r.stderr());
        assertNothingLeft(job);
    }

    private static void assertNothingLeft(String job) throws java.io.IOException {
        assertFalse(Files.exists(JobLayout.sharedMemoryView(job).shmRoot()), "shared memory left behind");
        assertFalse(Files.exists(RankDirectory.JOB_ROOT.in(work, JobLayout.currentUid(), job)),
                "local directory left behind");
    }
}
