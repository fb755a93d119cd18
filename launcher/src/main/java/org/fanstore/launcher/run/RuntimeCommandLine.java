package org.fanstore.launcher.run;

import java.util.ArrayList;
import java.util.List;
import org.fanstore.launcher.rendezvous.RendezvousFile;
import org.fanstore.launcher.startup.ClassArchive;
import org.fanstore.runtime.RuntimeConfig;
import org.fanstore.runtime.layout.RankDirectory;

/** The command line that starts one runtime rank of {@code fanstore run}: JVM, flags and its RuntimeConfig. */
final class RuntimeCommandLine {
    private RuntimeCommandLine() {
    }

    static List<String> of(RunCommand run, int rank, int worldSize, RendezvousFile.Endpoint rv, JobLayout layout,
                           JobEnvironment job) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        // lz4-java unpacks its native library into java.io.tmpdir and deletes it only at a normal JVM exit; a
        // runtime that halts or is killed would leave it in /tmp. In the rank's local directory it goes with the
        // directory, which every end of a job removes (teardown, or OrphanCleanup when the launcher is gone).
        cmd.add("-Djava.io.tmpdir=" + layout.localDir(rank));
        // The build's flags, then the class archive's when the build dumped one for exactly this JVM and class
        // path (startup/README.md), then the user's FANSTORE_RUNTIME_JAVA_OPTS.
        String classPath = System.getProperty("java.class.path");
        List<String> build = JvmFlags.buildRuntime();
        List<String> all = JvmFlags.runtime(System.getenv());
        cmd.addAll(build);
        cmd.addAll(ClassArchive.flags(ClassArchive.directory(), build, classPath,
                System.getenv().getOrDefault("FANSTORE_RUNTIME_JAVA_OPTS", "")));
        cmd.addAll(all.subList(build.size(), all.size()));
        cmd.add("-cp");
        cmd.add(ClassPathWildcard.compact(classPath));
        cmd.add("org.fanstore.runtime.RuntimeMain");
        cmd.addAll(new RuntimeConfig(rank, worldSize, rv.host(), rv.port(), run.datasetArgument(),
                layout.localDir(rank), layout.shmDir(rank),
                run.cacheMb != null ? run.cacheMb : defaultCacheMb(myShare(worldSize, job)), run.replicas, job.jobId(),
                RuntimeConfig.Unpack.of(run.unpack),
                RuntimeConfig.verboseFrom(System.getenv()), run.localCapacity, "on".equals(run.prefetch),
                run.outputDir == null ? null : run.outputDir.toAbsolutePath(),
                RankDirectory.JOB_SECRET.in(layout.shmDir(rank)), RuntimeConfig.TableLoad.of(run.tableLoad),
                RuntimeConfig.OnNodeLoss.of(run.onNodeLoss)).toArgs());
        return cmd;
    }

    private static int myShare(int worldSize, JobEnvironment job) {
        return job.scheduler().spansNodes() ? 1 : worldSize;
    }

    /** A quarter of RAM, split among the ranks sharing this machine. */
    static long defaultCacheMb(int ranksOnThisMachine) {
        long total = ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getTotalMemorySize();
        return Math.max(64, total / 4 / ranksOnThisMachine >> 20);
    }
}
