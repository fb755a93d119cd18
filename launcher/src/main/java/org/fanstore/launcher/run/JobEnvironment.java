package org.fanstore.launcher.run;

import java.util.Map;
import java.util.Optional;
import org.fanstore.launcher.UserError;

/**
 * Where this `fanstore run` process sits in the job: which node it is, how many nodes there are, and whether it
 * is the task that owns the node's runtime. One runtime serves a node, so the MPI world is made of nodes, not
 * tasks: with `srun --ntasks-per-node=4` the four tasks of a node share one runtime (local id 0 starts it).
 *
 * <p>The launcher that started this very process wins, whatever else is inherited: Open MPI's {@code mpirun}
 * and MPICH's {@code mpiexec.hydra} run inside SLURM allocations, where the batch step's (or their own
 * daemons' step's) {@code SLURM_*} variables are still set and describe one task per node, not this rank. So
 * {@code OMPI_COMM_WORLD_*} first, then hydra's {@code PMI_*}, then a SLURM job step. {@code srun --mpi=pmi2}
 * also sets {@code PMI_RANK}, equal to {@code SLURM_PROCID}: that is SLURM, which states node ids directly.
 */
public record JobEnvironment(Scheduler scheduler, String jobId, int nodeId, int nodeCount, int localId,
                             int localCount) {

    /** Set by the {@code fanstore} script from hydra's PMI server (PMI-1 {@code get_my_kvsname}): one per job. */
    static final String HYDRA_KVSNAME = "FANSTORE_PMI_KVSNAME";

    /** True when this task starts and owns the node's runtime. */
    public boolean ownsRuntime() {
        return localId == 0;
    }

    /**
     * The environment of a job started by a scheduler, or empty when there is none (single-machine mode).
     *
     * @throws UserError when the environment cannot give a consistent job (named variable, what to do)
     */
    public static Optional<JobEnvironment> detect(Map<String, String> env) {
        boolean slurmStep = env.containsKey("SLURM_JOB_ID") && env.containsKey("SLURM_STEP_ID");
        if (env.containsKey("OMPI_COMM_WORLD_RANK")) {
            String job = firstOf(env, "OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid", "PMIX_NAMESPACE");
            return Optional.of(fromRanks(Scheduler.OPENMPI, env, slurmStep, "OMPI_COMM_WORLD_RANK",
                    "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", job));
        }
        boolean srunPmi = slurmStep && !env.containsKey("MPI_LOCALRANKID")
                && String.valueOf(env.get("PMI_RANK")).equals(env.get("SLURM_PROCID"));
        if (env.containsKey("PMI_RANK") && !srunPmi) {
            String job = firstOf(env, "PMI_JOBID", HYDRA_KVSNAME, "PMIX_NAMESPACE");
            return Optional.of(fromRanks(Scheduler.PMI, env, slurmStep, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID",
                    "MPI_LOCALNRANKS", job));
        }
        if (env.containsKey("SLURM_PROCID") && env.containsKey("SLURM_JOB_ID")) {
            return Optional.of(slurm(env, slurmStep));
        }
        return Optional.empty();
    }

    private static JobEnvironment slurm(Map<String, String> env, boolean step) {
        int nodes = intOf(env, "SLURM_STEP_NUM_NODES",
                intOf(env, "SLURM_NNODES", intOf(env, "SLURM_JOB_NUM_NODES", 1)));
        if (!step) {
            // The batch script itself (or a shell inside salloc): one process on the first node, whatever -N says.
            if (nodes > 1) {
                throw new UserError("this is the batch script of a " + nodes + "-node SLURM job, not a job step, so"
                        + " only 1 of " + nodes + " nodes would join: start it on every node with srun, e.g. 'srun"
                        + " --ntasks-per-node=1 fanstore run ...' (as scripts/slurm/train.sbatch does)");
            }
            return new JobEnvironment(Scheduler.SLURM, sanitize(env.get("SLURM_JOB_ID") + ".batch"), 0, 1, 0, 1);
        }
        int tasks = intOf(env, "SLURM_STEP_NUM_TASKS", intOf(env, "SLURM_NTASKS", nodes));
        int nodeId = intOf(env, "SLURM_NODEID", 0);
        String perNode = env.getOrDefault("SLURM_STEP_TASKS_PER_NODE", env.get("SLURM_TASKS_PER_NODE"));
        int localCount = perNode != null ? tasksOnNode(perNode, nodeId) : ceilDiv(tasks, nodes);
        String job = env.get("SLURM_JOB_ID") + "." + env.get("SLURM_STEP_ID");
        return new JobEnvironment(Scheduler.SLURM, sanitize(job), nodeId, nodes, intOf(env, "SLURM_LOCALID", 0),
                localCount);
    }

    /**
     * Ranks of an MPI launcher. Inside a SLURM step, Open MPI and hydra started their per-node daemons with srun,
     * one task per node, so that step's node id and node count are exact; elsewhere the node id follows the block
     * distribution both use by default (rank / ranks per node), which assumes the same count on every node.
     */
    private static JobEnvironment fromRanks(Scheduler kind, Map<String, String> env, boolean slurmStep,
                                            String rankVar, String sizeVar, String localVar, String localSizeVar,
                                            String launcherJob) {
        int rank = intOf(env, rankVar, 0);
        int size = Math.max(1, intOf(env, sizeVar, 1));
        int localCount = Math.max(1, intOf(env, localSizeVar, 1));
        int localId = intOf(env, localVar, 0);
        String job = launcherJob != null ? launcherJob : env.get("FANSTORE_JOB_ID");
        if (job == null || job.isBlank()) {
            throw new UserError(kind.label() + " gives this process no job id: set FANSTORE_JOB_ID to one value"
                    + " shared by every task of the job, e.g. 'mpiexec -genv FANSTORE_JOB_ID $(date +%s%N) ...'");
        }
        if (launcherJob != null && env.containsKey("SLURM_JOB_ID")) {
            job = env.get("SLURM_JOB_ID") + "-" + job;
        }
        if (slurmStep && env.containsKey("SLURM_NODEID")) {
            return new JobEnvironment(kind, sanitize(job), intOf(env, "SLURM_NODEID", 0),
                    intOf(env, "SLURM_STEP_NUM_NODES", intOf(env, "SLURM_NNODES", 1)), localId, localCount);
        }
        return new JobEnvironment(kind, sanitize(job), rank / localCount, ceilDiv(size, localCount), localId,
                localCount);
    }

    private static String firstOf(Map<String, String> env, String... names) {
        for (String n : names) {
            String v = env.get(n);
            if (v != null && !v.isBlank()) {
                return v;
            }
        }
        return null;
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
        throw new UserError("SLURM_TASKS_PER_NODE='" + tasksPerNode + "' lists no node " + nodeId);
    }

    private static int intOf(Map<String, String> env, String name, int fallback) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new UserError("environment variable " + name + "='" + v + "' is not a number");
        }
    }

    private static int ceilDiv(int a, int b) {
        return (a + b - 1) / b;
    }

    /** Job ids end up in file names: keep them to a safe alphabet. */
    static String sanitize(String job) {
        String safe = job.replaceAll("[^A-Za-z0-9._-]", "_");
        return safe.length() <= 100 ? safe : safe.substring(0, 100);
    }
}
