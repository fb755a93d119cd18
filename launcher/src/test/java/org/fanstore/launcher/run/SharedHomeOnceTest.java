package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Each byte leaves a home shared by the nodes once (issue 45, runtime/fill's README, "A prefetch never reads the home
 * while its peer fills"): 2 real ranks with --prefetch on over 3 partitions behind ONE bindfs mount throttled to
 * 1 MiB/s, so rank 0 stages in two partitions and rank 1 one. Rank 1 ends its own first and then pulls rank 0's
 * second partition while rank 0 is still copying it in (about 7 s alone at the home's rate): every range it reaches
 * first is NOT_HELD. Before, after 100 such answers (5 s) its ranges went to the home, which then sent them twice.
 * Rank 0's command waits for both fills to end, then reads every file (SHA-256 of every byte, {@link FillReader}).
 */
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock(BesideTheOthers.LOCK)
class SharedHomeOnceTest {
    private static final int FILES = 21;
    private static final int FILE_BYTES = 1 << 20;

    @TempDir
    Path work;

    @Test
    void aPrefetchTrailingItsPeersStageInReadsTheHomeOnce() throws Exception {
        Path src = work.resolve("src").resolve("once");
        Path listing = work.resolve("once-sha256.txt");
        Random rnd = new Random(45);
        byte[] body = new byte[FILE_BYTES];
        try (FillReader.Listing out = new FillReader.Listing(listing)) {
            for (int i = 0; i < FILES; i++) {
                rnd.nextBytes(body);
                String rel = "d" + i % 3 + "/f" + i + ".bin";
                Files.createDirectories(src.resolve(rel).getParent());
                Files.write(src.resolve(rel), body);
                out.add(rel, body);
            }
        }
        Path home = Files.createDirectories(work.resolve("home"));
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 300, "prep", "--input", src.toString(), "--output",
                home.resolve("once.fs").toString(), "--partitions", "3"));
        long partitionBytes;
        try (Stream<Path> parts = Files.list(home.resolve("once.fs"))) {
            partitionBytes = parts.filter(p -> p.getFileName().toString().endsWith(".fsp")).mapToLong(p -> p.toFile()
                    .length()).sum();
        }
        Path mnt = Files.createDirectories(work.resolve("mnt"));
        Assumptions.assumeTrue(FillStressTest.bindfs(home, mnt, "1M"), "bindfs could not mount");
        try {
            String job = "tonce" + System.nanoTime();
            Path out = work.resolve("out");
            Path json = work.resolve("stats.json");
            Path program = FillReader.install(work);
            String command = "i=0; while [ \"$(ls \"$FANSTORE_SHM_DIR\"/../rank-*/prefetched 2>/dev/null | wc -l)\""
                    + " -lt 2 ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done; "
                    + FillReader.command(program, "/fanstore/once", listing, out, 1, 2, 1);
            FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 240,
                    "run", "--ranks", "2", "--only-rank", "0", "--prefetch", "on", "--data",
                    mnt.resolve("once.fs").toString(), "--local-dir", work.toString(), "--stats", json.toString(),
                    "--", "sh", "-c", command));
            FillReader.assertAllPerfect(out, 1, FILES, r.stderr());
            long home0 = 0;
            long home1 = 0;
            long peer1 = 0;
            for (JsonElement e : JsonParser.parseString(Files.readString(json)).getAsJsonObject()
                    .getAsJsonArray("ranks")) {
                JsonObject fill = e.getAsJsonObject().getAsJsonObject("fill");
                int rank = e.getAsJsonObject().get("rank").getAsInt();
                long fromHome = fill.get("bytes_from_sharedfs").getAsLong();
                if (rank == 0) {
                    home0 = fromHome;
                } else {
                    home1 = fromHome;
                    peer1 = fill.get("bytes_from_peer").getAsLong();
                }
            }
            String context = "home bytes rank 0 " + home0 + ", rank 1 " + home1 + ", rank 1 from rank 0 " + peer1
                    + ", partitions " + partitionBytes + "\n" + r.stderr();
            System.out.println("shared home: " + context.lines().findFirst().orElse(""));
            assertTrue(peer1 > 0, "rank 1 pulled nothing from rank 0, so the test proved nothing: " + context);
            assertEquals(partitionBytes, home0 + home1, "each partition byte leaves the shared home once: " + context);
        } finally {
            FillStressTest.unmountFuse(mnt);
        }
    }
}
