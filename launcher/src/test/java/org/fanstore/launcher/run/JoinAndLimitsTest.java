package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Jobs that cannot work end at once or within the join timeout, with one message that says why and what to do,
 * never after the 30-minute load timeout and never with a stack trace.
 */
class JoinAndLimitsTest {
    @TempDir
    Path work;

    private static Map<String, String> slurmStep(String job, int node) {
        return Map.of("SLURM_JOB_ID", job, "SLURM_STEP_ID", "0", "SLURM_PROCID", Integer.toString(node),
                "SLURM_NODEID", Integer.toString(node), "SLURM_STEP_NUM_NODES", "2",
                "SLURM_STEP_TASKS_PER_NODE", "1(x2)");
    }

    private static void noStackTrace(FanstoreProcess.Result r) {
        assertFalse(r.stderr().contains("\tat ") || r.stderr().contains("Exception"), r.stderr());
    }

    @Test
    void aRendezvousDirectoryOneNodeCannotSeeEndsBothNodesWithinTheJoinTimeout() throws Exception {
        SampleDataset ds = SampleDataset.make(work, "join", 4, 1);
        String job = Long.toString(System.nanoTime() % 1_000_000_000L);
        CompletableFuture<FanstoreProcess.Result> node0 = CompletableFuture.supplyAsync(() -> run(ds, job, 0));
        FanstoreProcess.Result node1 = run(ds, job, 1);
        FanstoreProcess.Result first = node0.get(90, TimeUnit.SECONDS);

        assertEquals(JobSupervisor.EXIT_RANK_FAILED, first.status(), first.stderr());
        assertTrue(first.stderr().contains("only 1 of 2 nodes joined within 5 s (missing: node 1)"), first.stderr());
        assertTrue(first.stderr().contains("srun"), first.stderr());
        assertEquals(JobSupervisor.EXIT_RANK_FAILED, node1.status(), node1.stderr());
        assertTrue(node1.stderr().contains("node 1 of 2 cannot join") && node1.stderr().contains("rv-1"),
                node1.stderr());
        noStackTrace(first);
        noStackTrace(node1);
        // 5 s of join timeout plus two JVM starts; far from the 1,800 s load timeout.
        assertTrue(first.millis() < 45_000, "node 0 took " + first.millis() + " ms");
        assertTrue(SampleDataset.nothingLeft(work, job + ".0"), "files left behind");
    }

    private FanstoreProcess.Result run(SampleDataset ds, String job, int node) {
        try {
            return FanstoreProcess.run(work, slurmStep(job, node), 90, "run", "--join-timeout", "5", "--data",
                    ds.data().toString(), "--local-dir", work.toString(), "--rendezvous-dir",
                    work.resolve("rv-" + node).toString(), "--", "true");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void theBatchScriptOfATwoNodeJobSaysToUseSrun() throws Exception {
        SampleDataset ds = SampleDataset.make(work, "batch", 2, 2);
        // What sbatch -N2 sets for the batch script (captured from a real slurmd): no SLURM_STEP_ID.
        Map<String, String> batch = Map.of("SLURM_JOB_ID", "9", "SLURM_PROCID", "0", "SLURM_NODEID", "0",
                "SLURM_LOCALID", "0", "SLURM_NNODES", "2", "SLURM_JOB_NUM_NODES", "2",
                "SLURM_TASKS_PER_NODE", "1(x2)", "ENVIRONMENT", "BATCH");
        FanstoreProcess.Result r = FanstoreProcess.run(work, batch, 60, "run", "--data", ds.data().toString(),
                "--local-dir", work.toString(), "--", "true");
        assertEquals(2, r.status(), r.stderr());
        assertTrue(r.stderr().contains("only 1 of 2 nodes would join") && r.stderr().contains("srun"), r.stderr());
        noStackTrace(r);
    }

    @Test
    void tooManyRanksAreRefusedNamingTheLimit() throws Exception {
        SampleDataset ds = SampleDataset.make(work, "many", 2, 3);
        int limit = RankLimit.ofThisMachine();
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of(), 60, "run", "--ranks", "99999", "--data",
                ds.data().toString(), "--local-dir", work.toString(), "--", "true");
        assertEquals(2, r.status(), r.stderr());
        assertTrue(r.stderr().contains("--ranks 99999 is above this machine's limit of " + limit), r.stderr());
        assertEquals(1, r.stderr().strip().split("\n").length, "one line:\n" + r.stderr());
        assertTrue(RankLimit.of(2, 24_000) == 8 && RankLimit.of(64, 4_096) == 32 && RankLimit.of(1, 100) == 2,
                "4 per core, 128 MiB each, at least 2");
    }
}
