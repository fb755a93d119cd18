package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A peer lost mid-transfer (issue 33: "the next source, the shared FS included, serves the range, so readers see no
 * error while a source remains"). Rank 1 is stopped (SIGSTOP: its process and sockets stay, it just never answers)
 * right after ready, while rank 0's fill of rank 1's partitions asks it for ranges and rank 0's reader waits for
 * every file rank 1 holds. After the peer's stall bound the shared FS serves those ranges: every read returns the
 * source's exact bytes (SHA-256), and once rank 1 is resumed the job ends normally. The prefetch-off twin of this
 * case is in FaultsTest.
 */
class HolderLossTest {
    /** Rank 1 holds half: 128 MiB, which the pull needs well over the ~0.1 s between ready and the stop. */
    private static final int FILES = 128;
    private static final int FILE_BYTES = 2 << 20;

    @TempDir
    static Path work;
    static Path data;
    static final Map<String, String> SHA256 = new HashMap<>();

    @BeforeAll
    static void prepare() throws Exception {
        Path src = Files.createDirectories(work.resolve("src/big"));
        Random random = new Random(8);
        byte[] body = new byte[FILE_BYTES];
        for (int i = 0; i < FILES; i++) {
            random.nextBytes(body);
            Files.write(src.resolve("f" + i + ".bin"), body);
            SHA256.put("/fanstore/big/f" + i + ".bin",
                    HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body)));
        }
        data = work.resolve("big.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                data.toString(), "--partitions", "4"));
    }

    @Test
    void aHolderStoppedDuringTheFillIsReadAroundFromTheSharedFsAndEveryByteIsRight() throws Exception {
        String job = "thold" + System.nanoTime();
        Path go = work.resolve(job + ".go");
        Path done = work.resolve(job + ".done");
        Path sums = work.resolve(job + ".sums");
        String reader = "if [ $FANSTORE_RANK = 0 ]; then while [ ! -e " + go + " ]; do sleep 0.05; done;"
                + " for i in $(seq 0 " + (FILES - 1) + "); do f=/fanstore/big/f$i.bin;"
                + " sha256sum $f 2>/dev/null || echo \"FAILED $f\"; done > " + sums + "; touch " + done + ";"
                + " else while [ ! -e " + done + " ]; do sleep 0.1; done; fi; exit 0";
        FaultsTest.Job j = FaultsTest.Job.start(data, work, Map.of("FANSTORE_JOB_ID", job), List.of("--ranks", "2"),
                reader);
        ProcessHandle rank1 = null;
        try {
            j.awaitReady(2);
            rank1 = FaultsTest.Job.runtimeOf(job, 1);
            assertEquals(0, new ProcessBuilder("kill", "-STOP", Long.toString(rank1.pid())).start().waitFor());
            long stopped = System.nanoTime();
            Files.createFile(go);
            boolean ended = Await.within(Duration.ofSeconds(60), () -> !j.launcher.isAlive() || Files.exists(done));
            assertTrue(ended, () -> "neither the job ended nor the reader finished 60 s after rank 1 stopped:\n"
                    + j.stderr() + "\n" + FaultsTest.survivors(job));
            String read = Files.exists(sums) ? Files.readString(sums) : "";
            int good = 0;
            int failed = 0;
            for (String line : read.split("\n")) {
                if (line.isEmpty()) {
                    continue;
                }
                if (line.startsWith("FAILED ")) {
                    failed++;
                    continue;
                }
                String[] hashAndPath = line.split(" +", 2);
                assertEquals(SHA256.get(hashAndPath[1]), hashAndPath[0], "wrong bytes in " + hashAndPath[1]);
                good++;
            }
            assertTrue(Files.exists(done), () -> "the reader did not finish:\n" + j.stderr());
            double seconds = (System.nanoTime() - stopped) / 1e9;
            assertEquals(0, failed, read);
            assertEquals(FILES, good, read);
            new ProcessBuilder("kill", "-CONT", Long.toString(rank1.pid())).start().waitFor();
            assertTrue(j.launcher.waitFor(60, TimeUnit.SECONDS), () -> "job still running after the reader ended:\n"
                    + j.stderr());
            assertEquals(0, j.launcher.exitValue(), j.stderr());
            // one stall bound (3 s) on the stopped peer, then the shared FS; never the fetch timeout per file
            assertTrue(seconds < 30, "the reads took " + seconds + " s after rank 1 stopped");
            assertTrue(FaultsTest.gone(job, work), "directories left behind");
            System.out.printf("holder stopped during the fill: %d files read right in %.1f s%n", good, seconds);
        } finally {
            if (rank1 != null && rank1.isAlive()) {
                new ProcessBuilder("kill", "-CONT", Long.toString(rank1.pid())).start().waitFor();
            }
            j.kill();
        }
    }
}
