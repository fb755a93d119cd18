package org.fanstore.runtime.fetch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.fanstore.launcher.run.Soak;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.fanstore.launcher.rendezvous.RendezvousServer;
import org.fanstore.runtime.world.PackedRankMain;
import org.fanstore.runtime.world.RankProcesses;

/**
 * MpiWorld and RemoteFetcher across real processes: each rank is a JVM running {@link RankMain}.
 */
class RemoteFetcherProcessTest {
    private static final long RANK_TIMEOUT_MILLIS = 90_000;

    @TempDir
    Path dir;

    @Test
    @Timeout(120)
    void twoRanksMeetThroughTheRendezvousFileAndFetchInSmallChunks() throws Exception {
        // rank 0 plays the rendezvous server and publishes it in a file, as under a scheduler;
        // 64 KiB chunks make the 9 MiB object travel in 145 messages.
        String endpoint = "file:" + dir + ":job-" + ProcessHandle.current().pid();
        try (RankProcesses ranks = new RankProcesses(dir)) {
            List<Process> ps = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                ps.add(ranks.start(r, RankMain.class, "exercise", "" + r, "2", endpoint, "" + (64 << 10), "8"));
            }
            assertAllExitCleanly(ranks, ps);
        }
    }

    @Test
    @Timeout(120)
    void fourRanksGatherAndFetchFromEachOtherWithConcurrentThreads() throws Exception {
        // 4 threads a rank: 12 at once at each rank's 4 serving threads; 8 under the soak (49 s here, 4: ~25 s)
        String threads = Soak.ON ? "8" : "4";
        try (RendezvousServer server =
                        RendezvousServer.start(InetAddress.getLoopbackAddress(), 4,
                                RankMain.JOIN_SECRET, Duration.ofSeconds(30));
                RankProcesses ranks = new RankProcesses(dir)) {
            String endpoint = server.host() + ":" + server.port();
            List<Process> ps = new ArrayList<>();
            for (int r = 0; r < 4; r++) {
                ps.add(ranks.start(r, RankMain.class, "exercise", "" + r, "4", endpoint,
                        "" + RemoteFetcher.DEFAULT_CHUNK_BYTES, threads));
            }
            server.awaitCompletion();
            assertAllExitCleanly(ranks, ps, threads);
        }
    }

    @Test
    @Timeout(120)
    void killedRankIsNamedBySurvivorsFetchAndAllGatherWithinTenSeconds() throws Exception {
        int victim = 2;
        try (RendezvousServer server =
                        RendezvousServer.start(InetAddress.getLoopbackAddress(), 3,
                                RankMain.JOIN_SECRET, Duration.ofSeconds(30));
                RankProcesses ranks = new RankProcesses(dir)) {
            String endpoint = server.host() + ":" + server.port();
            List<Process> ps = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                ps.add(ranks.start(r, RankMain.class, "survive", "" + r, "3", endpoint,
                        "" + RemoteFetcher.DEFAULT_CHUNK_BYTES, "1", "" + victim));
            }
            server.awaitCompletion();
            for (int r = 0; r < 3; r++) {
                assertTrue(ranks.awaitOutput(r, "READY", 30_000), () -> "not ready:\n" + safeOutput(ranks));
            }
            ps.get(victim).destroyForcibly(); // SIGKILL
            ps.get(victim).waitFor();
            for (int r = 0; r < 3; r++) {
                if (r != victim) {
                    RankProcesses.send(ps.get(r), "go");
                }
            }
            for (int r = 0; r < 3; r++) {
                if (r != victim) {
                    assertTrue(ranks.awaitOutput(r, "SURVIVOR_FETCH_", 30_000),
                            () -> "no report:\n" + safeOutput(ranks));
                }
            }
            for (int r = 0; r < 3; r++) {
                if (r != victim) {
                    RankProcesses.send(ps.get(r), "exit");
                }
            }
            for (int r = 0; r < 3; r++) {
                if (r == victim) {
                    continue;
                }
                int code = ranks.exitCode(ps.get(r), 30_000);
                String out = ranks.output(r);
                assertEquals(0, code, () -> "survivor " + code + ":\n" + safeOutput(ranks));
                assertNamesVictimQuickly(out, "FETCH_FAILED", victim);
                assertNamesVictimQuickly(out, "ALLGATHER_FAILED", victim);
                // why a node loss makes every survivor leave the world: MPJ no longer carries survivor to survivor
                assertTrue(out.contains("SURVIVOR_FETCH_FAILED") || out.contains("SURVIVOR_FETCH_BLOCKED"), out);
            }
        }
    }

    @Test
    @Timeout(120)
    void aRankWithoutTheJobSecretIsRefusedAndGetsNoByteAndTheRefusalIsLogged() throws Exception {
        try (RendezvousServer server =
                        RendezvousServer.start(InetAddress.getLoopbackAddress(), 2,
                                RankMain.JOIN_SECRET, Duration.ofSeconds(30));
                RankProcesses ranks = new RankProcesses(dir)) {
            String endpoint = server.host() + ":" + server.port();
            List<Process> ps = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                ps.add(ranks.start(r, RankMain.class, "rogue", "" + r, "2", endpoint,
                        "" + RemoteFetcher.DEFAULT_CHUNK_BYTES, "1"));
            }
            server.awaitCompletion();
            for (int r = 0; r < 2; r++) {
                int rank = r;
                int code = ranks.exitCode(ps.get(r), RANK_TIMEOUT_MILLIS);
                String out = ranks.output(r);
                assertEquals(0, code, () -> "rank " + rank + " exited " + code + ":\n" + safeOutput(ranks));
                assertTrue(out.contains("REFUSED UNAUTHORIZED bytes=0"), out);
                assertTrue(out.contains("BARRIER_OK"), out);
                assertTrue(out.contains("fanstore rank " + rank + ": refused a fetch request from rank " + (1 - rank)
                        + " without this job's secret"), out);
            }
        }
    }

    @Test
    @Timeout(120)
    void packedMessagesLandWholeWhetherTheReceiveWasPostedBeforeOrAfterTheyArrived() throws Exception {
        try (RendezvousServer server =
                        RendezvousServer.start(InetAddress.getLoopbackAddress(), 2,
                                RankMain.JOIN_SECRET, Duration.ofSeconds(30));
                RankProcesses ranks = new RankProcesses(dir)) {
            String endpoint = server.host() + ":" + server.port();
            List<Process> ps = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                ps.add(ranks.start(r, PackedRankMain.class, "" + r, endpoint));
            }
            server.awaitCompletion();
            for (int r = 0; r < 2; r++) {
                int rank = r;
                int code = ranks.exitCode(ps.get(r), RANK_TIMEOUT_MILLIS);
                assertEquals(0, code, () -> "rank " + rank + " exited " + code + ":\n" + safeOutput(ranks));
                assertTrue(ranks.output(r).contains("FINALIZED true"), ranks.output(r));
            }
            assertTrue(ranks.output(0).contains("PACKED_OK"), ranks.output(0));
        }
    }

    private static void assertNamesVictimQuickly(String out, String what, int victim) {
        Matcher m = Pattern.compile(what + " ranks=\\[(\\d+)] ms=(\\d+)").matcher(out);
        assertTrue(m.find(), () -> what + " missing:\n" + out);
        assertEquals(victim, Integer.parseInt(m.group(1)), out);
        assertTrue(Long.parseLong(m.group(2)) < 10_000, () -> what + " took too long:\n" + out);
    }

    private static void assertAllExitCleanly(RankProcesses ranks, List<Process> ps) throws Exception {
        assertAllExitCleanly(ranks, ps, "8");
    }

    /** Every rank exited 0 having gathered, fetched, fetched with {@code threads} threads at once and finalized. */
    private static void assertAllExitCleanly(RankProcesses ranks, List<Process> ps, String threads) throws Exception {
        for (int r = 0; r < ps.size(); r++) {
            int code = ranks.exitCode(ps.get(r), RANK_TIMEOUT_MILLIS);
            int rank = r;
            assertEquals(0, code, () -> "rank " + rank + " exited " + code + ":\n" + safeOutput(ranks));
        }
        for (int r = 0; r < ps.size(); r++) {
            String out = ranks.output(r);
            assertTrue(out.contains("ALLGATHER_OK") && out.contains("FETCH_OK")
                    && out.contains("CONCURRENT_OK " + threads + " ") && out.contains("FINALIZED true"), out);
            // readers' requests (whole objects) served at normal priority, pulls (ranges) at the lowest (fetch README)
            assertTrue(out.contains("PRIORITY readers=[0] pulls=[19]"), out);
        }
    }

    private static String safeOutput(RankProcesses ranks) {
        try {
            return ranks.allOutput();
        } catch (Exception e) {
            return "(no output: " + e + ")";
        }
    }
}
