package org.fanstore.launcher.run;

import java.util.Map;
import java.util.Optional;

/**
 * Where this `fanstore run` process sits in the job: which node it is, how many nodes there are, and whether it
 * is the task that owns the node's runtime. One runtime serves a node, so the MPI world is made of nodes, not
 * tasks: with `srun --ntasks-per-node=4` the four tasks of a node share one runtime (local id 0 starts it).
 *
 * <p>Read from the scheduler's environment, SLURM first (it states node ids directly), then Open MPI and PMI
 * (node id derived from the block distribution both use by default: rank / local size).
 */
public record JobEnvironment(Scheduler scheduler, String jobId, int nodeId, int nodeCount, int localId,
                             int localCount) {

    /** True when this task starts and owns the node's runtime. */
    public boolean ownsRuntime() {
        return localId == 0;
    }

    /** The environment of a job started by a scheduler, or empty when there is none (single-machine mode). */
    public static Optional<JobEnvironment> detect(Map<String, String> env) {
        if (env.containsKey("SLURM_PROCID") && env.containsKey("SLURM_JOB_ID")) {
            int nodes = intOf(env, "SLURM_NNODES", intOf(env, "SLURM_JOB_NUM_NODES", 1));
            int tasks = intOf(env, "SLURM_NTASKS", nodes);
            int nodeId = intOf(env, "SLURM_NODEID", 0);
            String perNode = env.get("SLURM_TASKS_PER_NODE");
            int localCount = perNode != null ? tasksOnNode(perNode, nodeId) : ceilDiv(tasks, nodes);
            String job = env.get("SLURM_JOB_ID") + "." + env.getOrDefault("SLURM_STEP_ID", "0");
            return Optional.of(new JobEnvironment(Scheduler.SLURM, sanitize(job), nodeId, nodes,
                    intOf(env, "SLURM_LOCALID", 0), localCount));
        }
        if (env.containsKey("OMPI_COMM_WORLD_RANK")) {
            return Optional.of(fromRanks(Scheduler.OPENMPI, env, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                    "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
                    env.getOrDefault("OMPI_MCA_orte_ess_jobid", env.getOrDefault("PMIX_NAMESPACE", ""))));
        }
        if (env.containsKey("PMI_RANK")) {
            return Optional.of(fromRanks(Scheduler.PMI, env, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID",
                    "MPI_LOCALNRANKS",
                    env.getOrDefault("PMI_JOBID", env.getOrDefault("PMIX_NAMESPACE", ""))));
        }
        return Optional.empty();
    }

    private static JobEnvironment fromRanks(Scheduler kind, Map<String, String> env, String rankVar, String sizeVar,
                                            String localVar, String localSizeVar, String job) {
        int rank = intOf(env, rankVar, 0);
        int size = Math.max(1, intOf(env, sizeVar, 1));
        int localCount = Math.max(1, intOf(env, localSizeVar, 1));
        int localId = intOf(env, localVar, 0);
        if (job.isEmpty()) {
            throw new IllegalStateException(kind.label() + " environment has no job id: set FANSTORE_JOB_ID to a value"
                    + " shared by every task of the job");
        }
        return new JobEnvironment(kind, sanitize(job), rank / localCount, ceilDiv(size, localCount), localId,
                localCount);
    }

    /** Tasks on node {@code nodeId} from SLURM's compressed list, e.g. {@code "2(x3),1"}: 2,2,2,1. */
    static int tasksOnNode(String tasksPerNode, int nodeId) {
        int node = 0;
        for (String group : tasksPerNode.split(",")) {
            String g = group.trim();
            int paren = g.indexOf('(');
            int count = Integer.parseInt(paren < 0 ? g : g.substring(0, paren));
            int repeat = paren < 0 ? 1 : Integer.parseInt(g.substring(paren + 2, g.length() - 1));
            if (nodeId < node + repeat) {
                return count;
            }
            node += repeat;
        }
        throw new IllegalStateException("SLURM_TASKS_PER_NODE='" + tasksPerNode + "' lists no node " + nodeId);
    }

    private static int intOf(Map<String, String> env, String name, int fallback) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalStateException("environment variable " + name + "='" + v + "' is not a number");
        }
    }

    private static int ceilDiv(int a, int b) {
        return (a + b - 1) / b;
    }

    /** Job ids end up in file names: keep them to a safe alphabet. */
    static String sanitize(String job) {
        return job.replaceAll("[^A-Za-z0-9._-]", "_");
    }
}
