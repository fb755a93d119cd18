package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.fanstore.runtime.layout.RankDirectory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A SLURM job step as srun would start it, on this one machine: three tasks on two "nodes" (node 0 runs two
 * tasks sharing one runtime, node 1 one task), each an independent `fanstore run` with the SLURM variables
 * srun sets. Node 0 serves the rendezvous and publishes it in a shared directory; every task reads every file.
 */
class SchedulerModeTest {
    @TempDir
    Path work;

    @Test
    void threeTasksOnTwoNodesShareRuntimesAndReadEverything() throws Exception {
        Path src = work.resolve("src/sched");
        Random rnd = new Random(3);
        List<String> keys = new ArrayList<>();
        Map<String, String> expected = new HashMap<>();
        for (int i = 0; i < 24; i++) {
            byte[] body = new byte[1000 + rnd.nextInt(200_000)];
            rnd.nextBytes(body);
            Path f = src.resolve("c" + (i % 4) + "/f" + i);
            Files.createDirectories(f.getParent());
            Files.write(f, body);
            String key = "sched/c" + (i % 4) + "/f" + i;
            keys.add(key);
            expected.put(key, String.format("%016x %d", RunJobTest.fnv(body), body.length));
        }
        Files.write(work.resolve("keys"), keys, StandardCharsets.UTF_8);
        Path data = work.resolve("sched.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                data.toString(), "--partitions", "4", "--compress", "lz4"));

        String jobId = Long.toString(System.nanoTime() % 1_000_000_000L);
        int[][] tasks = {{0, 0, 0}, {1, 0, 1}, {2, 1, 0}}; // procid, nodeid, localid
        List<CompletableFuture<FanstoreProcess.Result>> running = new ArrayList<>();
        // One thread per task: the tasks wait for each other, and the common pool has one thread on 2 cores.
        ExecutorService pool = Executors.newFixedThreadPool(tasks.length);
        for (int[] t : tasks) {
            Map<String, String> env = Map.of("SLURM_JOB_ID", jobId, "SLURM_STEP_ID", "0",
                    "SLURM_PROCID", Integer.toString(t[0]), "SLURM_NTASKS", "3", "SLURM_NNODES", "2",
                    "SLURM_NODEID", Integer.toString(t[1]), "SLURM_LOCALID", Integer.toString(t[2]),
                    "SLURM_TASKS_PER_NODE", "2,1");
            running.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return FanstoreProcess.run(work, env, 180, "run", "--data", data.toString(), "--local-dir",
                            work.toString(), "--rendezvous-dir", work.resolve("rv").toString(), "--", "sh", "-c",
                            RunJobTest.client() + " \"$FANSTORE_SHM_DIR\" " + work.resolve("keys"));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, pool));
        }
        pool.shutdown();
        for (int i = 0; i < tasks.length; i++) {
            FanstoreProcess.Result r = running.get(i).get(200, TimeUnit.SECONDS);
            assertEquals(0, r.status(), "task " + i + ":\n" + r.stderr() + "\nstdout:\n" + r.stdout());
            Map<String, String> got = new HashMap<>();
            for (String line : r.stdout().split("\n")) {
                String[] f = line.split(" ", 3);
                if (f.length == 3) {
                    got.put(f[2], f[0] + " " + f[1]);
                }
            }
            assertEquals(expected, got, "task " + i);
        }
        assertTrue(running.get(0).get().stderr().contains("fanstore: ready: 2 ranks"), running.get(0).get().stderr());
        assertFalse(Files.exists(JobLayout.sharedMemoryView(jobId + ".0").shmRoot()), "shared memory left behind");
        assertFalse(Files.exists(RankDirectory.JOB_ROOT.in(work, JobLayout.currentUid(), jobId + ".0")),
                "local directory left behind");
        try (var rv = Files.list(work.resolve("rv"))) {
            assertEquals(0, rv.count(), "rendezvous file left behind");
        }
    }
}
