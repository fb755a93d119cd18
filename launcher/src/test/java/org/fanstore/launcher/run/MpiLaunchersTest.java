package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `fanstore run` started by the real MPI launchers on this one machine, two tasks each: both tasks are on one
 * node, so they must agree on one job id and share one runtime, and `sha256sum` in each must read every file
 * right. MPICH's hydra puts no job id in the environment: the id comes from its PMI server. Skipped, with the
 * reason, only when the launcher is not installed.
 */
class MpiLaunchersTest {
    @TempDir
    Path work;

    @Test
    void openMpiTwoRanksShareOneRuntime() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/mpirun.openmpi")),
                "Open MPI is not installed (scripts/setup-debian.sh deps installs openmpi-bin)");
        runUnder(new String[] {"/usr/bin/mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-np", "2"});
    }

    @Test
    void hydraTwoRanksShareOneRuntime() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/mpiexec.hydra")),
                "MPICH is not installed (scripts/setup-debian.sh deps installs mpich)");
        String out = runUnder(new String[] {"/usr/bin/mpiexec.hydra", "-n", "2"});
        assertTrue(out.contains("JOB kvs_"), "the job id should be hydra's KVS name:\n" + out);
    }

    private String runUnder(String[] launcher) throws Exception {
        SampleDataset ds = SampleDataset.make(work, "mpi", 12, 7);
        FanstoreProcess.Result r = FanstoreProcess.runIn(launcher, work, Map.of(), 120, "run", "--data",
                ds.data().toString(), "--local-dir", work.toString(), "--rendezvous-dir",
                work.resolve("rv").toString(), "--", "sh", "-c", ds.readEverything());
        String all = "stdout:\n" + r.stdout() + "\nstderr:\n" + r.stderr();
        assertEquals(0, r.status(), all);
        assertEquals(2, ds.tasksThatReadEverything(r.stdout()), all);
        Set<String> ids = SampleDataset.jobIds(r.stdout());
        assertEquals(1, ids.size(), "both tasks must be in one job: " + ids);
        assertTrue(r.stderr().contains("fanstore: ready: 1 ranks"), "one runtime for the node:\n" + r.stderr());
        assertTrue(SampleDataset.nothingLeft(work, ids.iterator().next()), "files left behind");
        return r.stdout();
    }
}
