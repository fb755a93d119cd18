package org.fanstore.launcher.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A task that shares its node's runtime (local id > 0 under a scheduler): it waits, bounded, for the runtime
 * started by local task 0 to be ready, registers its pid so task 0 keeps the runtime up until it is done, and
 * runs the user's command with the same environment.
 */
final class SharedNodeTask {
    private final JobEnvironment job;
    private final RunCommand run;

    SharedNodeTask(JobEnvironment job, RunCommand run) {
        this.job = job;
        this.run = run;
    }

    int run() throws IOException, InterruptedException {
        JobLayout view = JobLayout.sharedMemoryView(job.jobId());
        Path ready = view.readyFile(job.nodeId());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(run.loadTimeoutSeconds);
        while (!Files.exists(ready)) {
            if (System.nanoTime() > deadline) {
                System.err.println("fanstore run: the runtime of node " + job.nodeId() + " (started by local task 0)"
                        + " was not ready after " + run.loadTimeoutSeconds + " s; see task 0's messages");
                return JobSupervisor.EXIT_RANK_FAILED;
            }
            Thread.sleep(100);
        }
        Path running = view.registerSharingTask(job.nodeId(), job.localId());
        try {
            ProcessBuilder pb = new ProcessBuilder(run.command()).inheritIO();
            pb.environment().putAll(run.commandEnv(job.nodeId(), job.nodeCount(), view, job, RunCommand.shimPath()));
            return pb.start().waitFor();
        } finally {
            view.sharingTaskDone(running, job.localId());
        }
    }
}
