package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
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
        assertThrows(IllegalStateException.class, () -> JobEnvironment.tasksOnNode("2(x2)", 2));
    }

    @Test
    void noSchedulerMeansSingleMachineMode() {
        assertTrue(JobEnvironment.detect(Map.of("HOME", "/root")).isEmpty());
    }

    @Test
    void garbageInTheEnvironmentIsNamed() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> JobEnvironment.detect(
                Map.of("SLURM_PROCID", "0", "SLURM_JOB_ID", "1", "SLURM_NODEID", "one")));
        assertTrue(e.getMessage().contains("SLURM_NODEID"), e.getMessage());
    }
}
