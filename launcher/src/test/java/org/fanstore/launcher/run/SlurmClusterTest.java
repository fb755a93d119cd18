package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * fanstore under a real SLURM: tests/slurm/cluster.sh starts munged, slurmctld and two slurmd nodes (n1, n2) on
 * this machine, and every job below is submitted with the real srun/sbatch/salloc/scancel. Both "nodes" share
 * /dev/shm and the local directory, so leftovers of either show. Skipped, with the daemons' own words, only when
 * the cluster cannot start (not root, slurm-wlm or munge missing).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SlurmClusterTest {
    private static final long JOB_SECONDS = 90;

    @TempDir
    static Path work;

    private Path cluster;
    private String clusterProblem;
    private SampleDataset ds;
    private Path local;
    private Path rendezvous;

    record Exec(int status, String stdout, String stderr, long millis) {}

    @BeforeAll
    void startCluster() throws Exception {
        // Short: the munge socket's path must fit a sockaddr_un.
        cluster = Files.createTempDirectory(Path.of("/tmp"), "fsl");
        Files.delete(cluster);
        Exec up = exec(List.of(FanstoreProcess.repo().resolve("tests/slurm/cluster.sh").toString(), "start",
                cluster.toString()), Map.of(), 60);
        if (up.status() != 0) {
            clusterProblem = "the SLURM test cluster did not start (exit " + up.status() + "): " + up.stderr();
            return;
        }
        ds = SampleDataset.make(work, "sl", 16, 11);
        local = Files.createDirectories(work.resolve("local"));
        rendezvous = Files.createDirectories(work.resolve("rv"));
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (cluster != null) {
            exec(List.of(FanstoreProcess.repo().resolve("tests/slurm/cluster.sh").toString(), "stop",
                    cluster.toString()), Map.of(), 60);
        }
    }

    private void needCluster() {
        assumeTrue(clusterProblem == null, clusterProblem);
    }

    private List<String> fanstoreRun(String... command) {
        return fanstoreRun(List.of(), command);
    }

    private List<String> fanstoreRun(List<String> options, String... command) {
        List<String> cmd = new ArrayList<>(List.of(FanstoreProcess.repo().resolve("fanstore").toString(), "run",
                "--data", ds.data().toString(), "--local-dir", local.toString(), "--rendezvous-dir",
                rendezvous.toString(), "--join-timeout", "20"));
        cmd.addAll(options);
        cmd.add("--");
        cmd.addAll(List.of(command));
        return cmd;
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    private void assertReadAndClean(Exec r, int tasks, String runtimes) throws IOException {
        String all = "exit " + r.status() + "\nstdout:\n" + r.stdout() + "\nstderr:\n" + r.stderr();
        assertEquals(0, r.status(), all);
        assertEquals(tasks, ds.tasksThatReadEverything(r.stdout()), all);
        assertTrue(r.stderr().contains("fanstore: ready: " + runtimes), all);
        assertNothingLeft(SampleDataset.jobIds(r.stdout()));
    }

    private void assertNothingLeft(Set<String> jobIds) throws IOException {
        assertFalse(jobIds.isEmpty(), "no job id printed");
        for (String id : jobIds) {
            assertTrue(SampleDataset.nothingLeft(local, id), "files of job " + id + " left behind");
        }
        try (var rv = Files.list(rendezvous)) {
            assertEquals(0, rv.count(), "rendezvous file left behind");
        }
    }

    @Test
    void srunTwoNodes() throws Exception {
        needCluster();
        assertReadAndClean(exec(concat(List.of("srun", "-N2", "--ntasks-per-node=1"),
                fanstoreRun("sh", "-c", ds.readEverything())), Map.of(), JOB_SECONDS), 2, "2 ranks");
    }

    @Test
    void srunOneNodeTwoTasksShareItsRuntime() throws Exception {
        needCluster();
        assertReadAndClean(exec(concat(List.of("srun", "-N1", "-n2"),
                fanstoreRun("sh", "-c", ds.readEverything())), Map.of(), JOB_SECONDS), 2, "1 ranks");
    }

    @Test
    void theTrainTemplate() throws Exception {
        needCluster();
        Path out = work.resolve("train.out");
        Exec r = exec(List.of("sbatch", "-W", "-N2", "-o", out.toString(),
                FanstoreProcess.repo().resolve("scripts/slurm/train.sbatch").toString(), ds.data().toString(),
                "sh", "-c", ds.readEverything()),
                Map.of("FANSTORE", FanstoreProcess.repo().resolve("fanstore").toString(),
                        "RENDEZVOUS_DIR", rendezvous.toString(), "LOCAL_DIR", local.toString()), JOB_SECONDS);
        String text = Files.exists(out) ? Files.readString(out) : "";
        // sbatch -o merges the job's stdout and stderr into one file.
        assertReadAndClean(new Exec(r.status(), text, text, r.millis()), 2, "2 ranks");
    }

    @Test
    void aBatchScriptWithoutSrunSaysSoAtOnce() throws Exception {
        needCluster();
        Path script = work.resolve("nosrun.sbatch");
        Files.writeString(script, "#!/bin/bash\nexec " + String.join(" ", fanstoreRun("true")) + "\n");
        Path out = work.resolve("nosrun.out");
        Exec r = exec(List.of("sbatch", "-W", "-N2", "-o", out.toString(), script.toString()), Map.of(),
                JOB_SECONDS);
        String text = Files.readString(out);
        assertNotEquals(0, r.status(), text);
        assertTrue(text.contains("only 1 of 2 nodes would join") && text.contains("srun"), text);
        assertFalse(text.contains("\tat ") || text.contains("Exception"), text);
        assertTrue(r.millis() < 30_000, "took " + r.millis() + " ms");
    }

    @Test
    void scancelMidReadEndsTheJobAndCleansUp() throws Exception {
        needCluster();
        Path started = work.resolve("scancel.started");
        Path jobFile = work.resolve("scancel.job");
        Process srun = start(concat(List.of("srun", "-J", "scancel", "-N2", "--ntasks-per-node=1"),
                fanstoreRun("sh", "-c", "echo $FANSTORE_JOB_ID > " + jobFile + "; while true; do "
                        + ds.readEverything() + " > /dev/null; touch " + started + "; done")), "scancel");
        try {
            Await.until(Duration.ofSeconds(60), () -> Files.exists(started) && nonEmpty(jobFile),
                    "the command never finished a pass");
            String job = Files.readString(jobFile).strip();
            assertEquals(0, exec(List.of("scancel", job.substring(0, job.indexOf('.'))), Map.of(), 30).status());
            assertTrue(srun.waitFor(40, TimeUnit.SECONDS), "srun still running 40 s after scancel");
            assertNotEquals(0, srun.exitValue());
            Await.until(Duration.ofSeconds(20), () -> nothingLeft(job), "files of job " + job + " left behind");
        } finally {
            cancel("scancel", srun);
        }
    }

    /** --on-node-loss end: a killed runtime ends every node's job (the default goes on: the test below). */
    @Test
    void aKilledRuntimeEndsTheJob() throws Exception {
        needCluster();
        Path jobFile = work.resolve("kill.job");
        Path started = work.resolve("kill.started");
        Process srun = start(concat(List.of("srun", "-J", "kill", "-N2", "--ntasks-per-node=1"),
                fanstoreRun(List.of("--on-node-loss", "end"), "sh", "-c", "echo $FANSTORE_JOB_ID > " + jobFile + "."
                        + "$FANSTORE_RANK; while true; do "
                        + ds.readEverything() + " > /dev/null; touch " + started + "; done")), "kill");
        String job = null;
        try {
            Path nodeZero = Path.of(jobFile + ".0");
            Await.until(Duration.ofSeconds(60), () -> Files.exists(started) && nonEmpty(nodeZero),
                    "the command never finished a pass");
            job = Files.readString(nodeZero).strip();
            String rankOneDir = job;
            ProcessHandle runtime = ProcessHandle.allProcesses().filter(p -> p.info().commandLine()
                    .map(c -> c.contains("org.fanstore.runtime.RuntimeMain") && c.contains(rankOneDir)
                            && c.contains("rank-1")).orElse(false)).findFirst().orElse(null);
            assertTrue(runtime != null, "no runtime of node 1 found for job " + job);
            runtime.destroyForcibly();
            assertTrue(srun.waitFor(30, TimeUnit.SECONDS),
                    "the job was still running 30 s after node 1's runtime was killed");
            assertNotEquals(0, srun.exitValue());
            String finished = job;
            Await.until(Duration.ofSeconds(20), () -> nothingLeft(finished), "files of job " + job + " left");
        } finally {
            cancel("kill", srun);
        }
    }

    /**
     * A node lost under {@code srun --no-kill} (docs/reliability.md, 16): node 1's runtime and command SIGKILLed after
     * node 0's first pass; node 0 reads every file right twice more and exits 0, node 1's task exits 3, srun ends,
     * nothing of the job is left.
     */
    @Test
    void aNodeLostUnderSrunNoKillLeavesTheOtherNodeReading() throws Exception {
        needCluster();
        Path w = Files.createDirectories(work.resolve("loss"));
        String pass = ds.readEverything();
        Process srun = start(concat(List.of("srun", "-J", "loss", "--no-kill", "-N2", "--ntasks-per-node=1"),
                fanstoreRun("sh", "-c", "echo $FANSTORE_JOB_ID > " + w + "/job.$FANSTORE_RANK; if [ $FANSTORE_RANK"
                        + " = 1 ]; then echo $$ > " + w + "/pgid; exec sleep 600; fi; " + pass + "; touch " + w
                        + "/pass1; while [ ! -e " + w + "/killed ]; do sleep 0.1; done; " + pass + "; " + pass)),
                "loss");
        try {
            Await.until(Duration.ofSeconds(90), () -> Files.exists(w.resolve("pass1")) && nonEmpty(w.resolve("pgid"))
                    && nonEmpty(w.resolve("job.0")), "node 0 never finished its first pass");
            String job = Files.readString(w.resolve("job.0")).strip();
            ProcessHandle runtime = ProcessHandle.allProcesses().filter(p -> p.info().commandLine()
                    .map(c -> c.contains("org.fanstore.runtime.RuntimeMain") && c.contains(job)
                            && c.contains("rank-1")).orElse(false)).findFirst().orElse(null);
            assertTrue(runtime != null, "no runtime of node 1 found for job " + job);
            runtime.destroyForcibly();
            runtime.onExit().get(10, TimeUnit.SECONDS);
            exec(List.of("kill", "-KILL", "--", "-" + Files.readString(w.resolve("pgid")).strip()), Map.of(), 10);
            Files.createFile(w.resolve("killed"));
            assertTrue(srun.waitFor(JOB_SECONDS, TimeUnit.SECONDS), "srun still running");
            String out = Files.readString(work.resolve("loss.stdout"));
            String err = Files.readString(work.resolve("loss.stderr"));
            assertEquals(3, ds.tasksThatReadEverything(out), "node 0's three passes:\n" + out + "\n" + err);
            assertTrue(err.contains("lost rank 1 at "), err);
            assertTrue(err.contains("exited with exit code 3") || srun.exitValue() == 3,
                    "node 1's task ends with 3 (exit " + srun.exitValue() + "):\n" + err);
            Await.until(Duration.ofSeconds(20), () -> nothingLeft(job), "files of job " + job + " left");
            System.out.printf("srun --no-kill: node 1 lost, node 0 read on (srun exit %d)%n%s", srun.exitValue(), err);
        } finally {
            cancel("loss", srun);
        }
    }

    @Test
    void openMpiInsideAnAllocation() throws Exception {
        needCluster();
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/mpirun.openmpi")),
                "Open MPI is not installed (scripts/setup-debian.sh deps installs openmpi-bin)");
        // 3 ranks on 2 nodes: mpirun puts 2 on the first node (sharing its runtime) and 1 on the second, and
        // every rank inherits SLURM_* that say "task 0 of 2" or "task 1 of 2".
        Exec r = exec(concat(List.of("salloc", "-N2", "/usr/bin/mpirun.openmpi", "--allow-run-as-root",
                "--oversubscribe", "-np", "3"), fanstoreRun("sh", "-c", ds.readEverything())), Map.of(),
                JOB_SECONDS);
        assertReadAndClean(r, 3, "2 ranks");
    }

    @Test
    void hydraInsideAnAllocation() throws Exception {
        needCluster();
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/mpiexec.hydra")),
                "MPICH is not installed (scripts/setup-debian.sh deps installs mpich)");
        // Hydra starts its proxies with srun (one per node): the ranks see that step's SLURM_* and hydra's PMI_*.
        Exec r = exec(concat(List.of("salloc", "-N2", "/usr/bin/mpiexec.hydra", "-n", "2"),
                fanstoreRun("sh", "-c", ds.readEverything())), Map.of(), JOB_SECONDS);
        assertReadAndClean(r, 2, "2 ranks");
    }

    private static boolean nonEmpty(Path file) {
        try {
            return Files.exists(file) && Files.readString(file).strip().length() > 0;
        } catch (IOException e) {
            return false;
        }
    }

    private boolean nothingLeft(String job) {
        try {
            return SampleDataset.nothingLeft(local, job);
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Ends a job started with {@code srun -J name} whatever state the test left it in: killing srun alone would
     * leave its step running under slurmstepd.
     */
    private void cancel(String name, Process srun) throws IOException, InterruptedException {
        if (srun.isAlive()) {
            exec(List.of("scancel", "--name=" + name), Map.of(), 30);
            srun.waitFor(30, TimeUnit.SECONDS);
        }
        srun.descendants().forEach(ProcessHandle::destroyForcibly);
        srun.destroyForcibly();
    }

    private Map<String, String> slurmEnv() {
        Map<String, String> env = new HashMap<>();
        env.put("SLURM_CONF", cluster.resolve("slurm.conf").toString());
        return env;
    }

    private Process start(List<String> cmd, String name) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(work.toFile());
        pb.environment().putAll(slurmEnv());
        pb.redirectOutput(work.resolve(name + ".stdout").toFile()).redirectError(work.resolve(name + ".stderr")
                .toFile());
        return pb.start();
    }

    private Exec exec(List<String> cmd, Map<String, String> env, long timeoutSeconds)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(work.toFile());
        if (cluster != null && Files.exists(cluster.resolve("slurm.conf"))) {
            pb.environment().putAll(slurmEnv());
        }
        pb.environment().putAll(env);
        Path out = Files.createTempFile(work, "out", ".txt");
        Path err = Files.createTempFile(work, "err", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        long t0 = System.nanoTime();
        Process p = pb.start();
        try {
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                throw new AssertionError(String.join(" ", cmd) + " still running after " + timeoutSeconds
                        + " s; stderr so far:\n" + Files.readString(err));
            }
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        return new Exec(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8), (System.nanoTime() - t0) / 1_000_000);
    }
}
