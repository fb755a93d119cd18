package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.fanstore.launcher.UserError;
import org.junit.jupiter.api.Test;

class JobEnvironmentTest {

    @Test
    void slurmTasksOnOneNodeShareItsRuntime() {
        Map<String, String> env = Map.of("SLURM_PROCID", "6", "SLURM_JOB_ID", "991", "SLURM_STEP_ID", "2",
                "SLURM_NNODES", "4", "SLURM_NTASKS", "16", "SLURM_NODEID", "1", "SLURM_LOCALID", "2");
        JobEnvironment job = JobEnvironment.detect(env).orElseThrow();
        assertEquals(new JobEnvironment(Scheduler.SLURM, "991.2", 1, 4, 2, 4), job);
        assertFalse(job.ownsRuntime());
    }

    @Test
    void openMpiNodeIdFollowsBlockDistribution() {
        Map<String, String> env = Map.of("OMPI_COMM_WORLD_RANK", "5", "OMPI_COMM_WORLD_SIZE", "8",
                "OMPI_COMM_WORLD_LOCAL_RANK", "1", "OMPI_COMM_WORLD_LOCAL_SIZE", "4", "PMIX_NAMESPACE", "job@7");
        JobEnvironment job = JobEnvironment.detect(env).orElseThrow();
        assertEquals(1, job.nodeId());
        assertEquals(2, job.nodeCount());
        assertEquals("job_7", job.jobId());
    }

    @Test
    void pmiWithOneTaskPerNode() {
        JobEnvironment job = JobEnvironment.detect(Map.of("PMI_RANK", "0", "PMI_SIZE", "3", "PMI_JOBID", "x"))
                .orElseThrow();
        assertEquals(3, job.nodeCount());
        assertTrue(job.ownsRuntime());
    }

    @Test
    void slurmTasksPerNodeListIsExpanded() {
        assertEquals(2, JobEnvironment.tasksOnNode("2(x3),1", 2));
        assertEquals(1, JobEnvironment.tasksOnNode("2(x3),1", 3));
        assertEquals(4, JobEnvironment.tasksOnNode("4", 0));
        assertThrows(UserError.class, () -> JobEnvironment.tasksOnNode("2(x2)", 2));
    }

    @Test
    void noSchedulerMeansSingleMachineMode() {
        assertTrue(JobEnvironment.detect(Map.of("HOME", "/root")).isEmpty());
    }

    @Test
    void garbageInTheEnvironmentIsNamed() {
        UserError e = assertThrows(UserError.class, () -> JobEnvironment.detect(
                Map.of("SLURM_PROCID", "0", "SLURM_JOB_ID", "1", "SLURM_STEP_ID", "0", "SLURM_NODEID", "one")));
        assertTrue(e.getMessage().contains("SLURM_NODEID"), e.getMessage());
    }

    /** What `mpirun -np 3` in a 2-node sbatch gave rank 2 (captured here): SLURM_* are those of the orted step. */
    private static Map<String, String> openMpiInsideAllocation(int rank, int localRank, int localSize, int node) {
        Map<String, String> env = new HashMap<>(Map.of("SLURM_JOB_ID", "3", "SLURM_STEP_ID", "0",
                "SLURM_PROCID", Integer.toString(node), "SLURM_NODEID", Integer.toString(node),
                "SLURM_STEP_NUM_NODES", "2", "SLURM_NTASKS", "2", "SLURM_TASKS_PER_NODE", "1(x2)"));
        env.putAll(Map.of("OMPI_COMM_WORLD_RANK", Integer.toString(rank), "OMPI_COMM_WORLD_SIZE", "3",
                "OMPI_COMM_WORLD_LOCAL_RANK", Integer.toString(localRank),
                "OMPI_COMM_WORLD_LOCAL_SIZE", Integer.toString(localSize),
                "OMPI_MCA_ess_base_jobid", "770506753", "PMIX_NAMESPACE", "770506753"));
        return env;
    }

    @Test
    void openMpiWinsOverTheSlurmStepOfItsDaemons() {
        JobEnvironment r0 = JobEnvironment.detect(openMpiInsideAllocation(0, 0, 2, 0)).orElseThrow();
        JobEnvironment r1 = JobEnvironment.detect(openMpiInsideAllocation(1, 1, 2, 0)).orElseThrow();
        JobEnvironment r2 = JobEnvironment.detect(openMpiInsideAllocation(2, 0, 1, 1)).orElseThrow();
        assertEquals(new JobEnvironment(Scheduler.OPENMPI, "3-770506753", 0, 2, 0, 2), r0);
        assertEquals(new JobEnvironment(Scheduler.OPENMPI, "3-770506753", 0, 2, 1, 2), r1);
        assertEquals(new JobEnvironment(Scheduler.OPENMPI, "3-770506753", 1, 2, 0, 1), r2);
    }

    @Test
    void hydraInsideAnAllocationIsPmiWithItsKvsName() {
        Map<String, String> env = new HashMap<>(Map.of("SLURM_JOB_ID", "5", "SLURM_STEP_ID", "1",
                "SLURM_PROCID", "1", "SLURM_NODEID", "1", "SLURM_STEP_NUM_NODES", "2"));
        env.putAll(Map.of("PMI_RANK", "1", "PMI_SIZE", "2", "MPI_LOCALRANKID", "0", "MPI_LOCALNRANKS", "1",
                JobEnvironment.HYDRA_KVSNAME, "kvs_14797_0_1545371353_vm"));
        assertEquals(new JobEnvironment(Scheduler.PMI, "5-kvs_14797_0_1545371353_vm", 1, 2, 0, 1),
                JobEnvironment.detect(env).orElseThrow());
    }

    @Test
    void srunsOwnPmiIsSlurm() {
        Map<String, String> env = Map.of("SLURM_JOB_ID", "4", "SLURM_STEP_ID", "0", "SLURM_PROCID", "2",
                "SLURM_NODEID", "1", "SLURM_STEP_NUM_NODES", "2", "SLURM_STEP_TASKS_PER_NODE", "2,1",
                "PMI_RANK", "2", "PMI_SIZE", "3", "PMI_JOBID", "4.0");
        assertEquals(new JobEnvironment(Scheduler.SLURM, "4.0", 1, 2, 0, 1), JobEnvironment.detect(env).orElseThrow());
    }

    @Test
    void fanstoreJobIdServesWhenTheLauncherGivesNone() {
        Map<String, String> env = Map.of("PMI_RANK", "1", "PMI_SIZE", "2", "MPI_LOCALRANKID", "1",
                "MPI_LOCALNRANKS", "2", "FANSTORE_JOB_ID", "my job");
        assertEquals(new JobEnvironment(Scheduler.PMI, "my_job", 0, 1, 1, 2), JobEnvironment.detect(env).orElseThrow());
        UserError e = assertThrows(UserError.class, () -> JobEnvironment.detect(
                Map.of("PMI_RANK", "1", "PMI_SIZE", "2", "MPI_LOCALRANKID", "1", "MPI_LOCALNRANKS", "2")));
        assertTrue(e.getMessage().contains("FANSTORE_JOB_ID"), e.getMessage());
    }

    @Test
    void theBatchScriptOfAMultiNodeJobIsRefusedWithWhatToDo() {
        // As sbatch -N2 sets them for the batch script: no SLURM_STEP_ID.
        Map<String, String> batch = Map.of("SLURM_JOB_ID", "1", "SLURM_PROCID", "0", "SLURM_NODEID", "0",
                "SLURM_NNODES", "2", "SLURM_TASKS_PER_NODE", "1(x2)", "ENVIRONMENT", "BATCH");
        UserError e = assertThrows(UserError.class, () -> JobEnvironment.detect(batch));
        assertTrue(e.getMessage().contains("only 1 of 2 nodes") && e.getMessage().contains("srun"), e.getMessage());
        Map<String, String> oneNode = new HashMap<>(batch);
        oneNode.put("SLURM_NNODES", "1");
        assertEquals(new JobEnvironment(Scheduler.SLURM, "1.batch", 0, 1, 0, 1),
                JobEnvironment.detect(oneNode).orElseThrow());
    }
}
