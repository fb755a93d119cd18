package org.fanstore.launcher.run;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import org.fanstore.runtime.RuntimeConfig;
import org.fanstore.runtime.layout.RankDirectory;
import org.fanstore.runtime.mpi.JobSecret;
import org.fanstore.runtime.mpi.RendezvousFile;
import org.fanstore.runtime.mpi.RendezvousServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code fanstore run}: the runtimes of this node (or, with --ranks, N ranks on this machine), then the user's
 * command under the shim. Exit status: the command's; {@value JobSupervisor#EXIT_RANK_FAILED} when a runtime
 * rank failed; 2 for bad arguments.
 */
@Command(name = "run", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Serve a prepared dataset under the mount prefix and run CMD with it.",
                "Under SLURM / Open MPI / PMI one runtime per node is started (tasks on a node share it);",
                "without a scheduler, --ranks N starts N ranks on this machine as if they were N nodes."})
public final class RunCommand implements Callable<Integer> {
    @Option(names = "--data", required = true, paramLabel = "OUT.fs", description = "dataset written by fanstore prep")
    Path data;

    @Option(names = "--ranks", paramLabel = "N", description = "ranks on this machine (no scheduler); default 1")
    Integer ranks;

    @Option(names = "--local-dir", paramLabel = "DIR", description = "node-local storage (default: $TMPDIR or /tmp)")
    Path localDir;

    @Option(names = "--mount", paramLabel = "PREFIX", defaultValue = "/fanstore",
        description = "default: ${DEFAULT-VALUE}")
    String mount;

    @Option(names = "--cache-mb", paramLabel = "M", description = "tmpfs cache bound per node (default: 1/4 of RAM)")
    Long cacheMb;

    @Option(names = "--replicas", paramLabel = "K", defaultValue = "0", description = "extra copies of each partition")
    int replicas;

    @Option(names = "--output-dir", paramLabel = "DIR",
        description = "persistent directory for files written under the mount")
    Path outputDir;

    @Option(names = "--only-rank", paramLabel = "R", description = "run CMD on rank R only (--ranks mode)")
    Integer onlyRank;

    @Option(names = "--unpack", paramLabel = "MODE", defaultValue = "background",
            description = {"when local uncompressed files are unpacked for direct opens: eager (before ready:",
                    "native speed from the first read), background (default: ready sooner, first opens of files",
                    "not yet unpacked cost a round trip), lazy (only when first opened: jobs reading a small part)"})
    String unpack;

    @Option(names = "--prefetch", paramLabel = "on|off", defaultValue = "on",
            description = {"after ready, copy the partitions other ranks hold to local storage in the background",
                    "(large transfers, yielding to readers' fetches), so later epochs read everything locally"})
    String prefetch;

    @Option(names = "--local-capacity", paramLabel = "SIZE", defaultValue = "auto",
            description = {"most bytes prefetched partitions may take per node: 500M, 20G, 50% (of the local file",
                    "system) or auto (default: its free space minus max(10%, 1 GiB), checked before each partition)"})
    String localCapacity;

    @Option(names = "--keep-local", description = "keep node-local copies and shared memory after the job")
    boolean keepLocal;

    @Option(names = "--load-timeout", paramLabel = "SECONDS", defaultValue = "1800",
        description = "default: ${DEFAULT-VALUE}")
    int loadTimeoutSeconds;


    @Option(names = "--rendezvous-dir", paramLabel = "DIR",
            description = "shared directory where node 0 publishes its address (scheduler mode; default ~/.fanstore)")
    Path rendezvousDir;

    @Parameters(arity = "1..*", paramLabel = "CMD", description = "the command to run (after --)")
    List<String> command;

    private final PrintStream err = System.err;

    @Override
    public Integer call() throws Exception {
        Optional<JobEnvironment> scheduler = ranks == null ? JobEnvironment.detect(System.getenv()) : Optional.empty();
        String problem = validate(scheduler.isPresent());
        if (problem != null) {
            err.println("fanstore run: " + problem);
            return 2;
        }
        Path shim = Path.of(System.getenv().getOrDefault("FANSTORE_HOME", "."), "interpose-native", "build",
                "libfanstore.so").toAbsolutePath();
        if (!Files.isRegularFile(shim)) {
            err.println("fanstore run: the shim " + shim + " is missing: build with scripts/setup-debian.sh build");
            return 2;
        }
        JobEnvironment job = scheduler.orElseGet(() -> new JobEnvironment(Scheduler.LOCAL, localJobId(), 0, 1, 0, 1));
        int worldSize = scheduler.isPresent() ? job.nodeCount() : (ranks == null ? 1 : ranks);
        int[] myRanks = scheduler.isPresent() ? new int[] {job.nodeId()} : range(worldSize);
        if (scheduler.isPresent() && !job.ownsRuntime()) {
            return new SharedNodeTask(job, this).run();
        }
        JobLayout layout = JobLayout.create(localBase(), JobLayout.SHM_BASE, job.jobId());
        JobSupervisor supervisor = new JobSupervisor(err);
        Thread hook = new Thread(() -> teardown(supervisor, layout, myRanks), "fanstore-teardown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return runJob(job, worldSize, myRanks, layout, supervisor, shim);
        } finally {
            teardown(supervisor, layout, myRanks);
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException ignored) {
                // Already shutting down: the hook runs teardown again, which is idempotent.
            }
        }
    }

    private int runJob(JobEnvironment job, int worldSize, int[] myRanks, JobLayout layout, JobSupervisor supervisor,
                       Path shim) throws IOException, InterruptedException {
        long started = System.nanoTime();
        Duration loadTimeout = Duration.ofSeconds(loadTimeoutSeconds);
        RendezvousServer server = null;
        RendezvousFile.Endpoint endpoint;
        JobSecret secret;
        try {
            if (job.nodeId() == 0) {
                secret = JobSecret.generate();
                server = RendezvousServer.start(RendezvousServer.defaultBindAddress(), worldSize, loadTimeout);
                endpoint = new RendezvousFile.Endpoint(server.host(), server.port());
                if (job.scheduler().spansNodes()) {
                    Files.createDirectories(rendezvousBase());
                    RendezvousFile.publishSecret(rendezvousBase(), job.jobId(), secret);
                    RendezvousFile.publish(rendezvousBase(), job.jobId(), server.host(), server.port());
                }
            } else {
                endpoint = RendezvousFile.await(rendezvousBase(), job.jobId(), loadTimeout);
                secret = RendezvousFile.readSecret(rendezvousBase(), job.jobId());
            }
            for (int rank : myRanks) {
                Files.createDirectories(layout.shmDir(rank));
                secret.writePrivate(RankDirectory.JOB_SECRET.in(layout.shmDir(rank)));
            }
            RendezvousFile.Endpoint rv = endpoint;
            supervisor.startRuntimes(myRanks, rank -> runtimeCommand(rank, worldSize, rv, layout, job));
            Map<Integer, String> ready = supervisor.awaitReady(loadTimeout.toMillis());
            if (ready == null) {
                return JobSupervisor.EXIT_RANK_FAILED;
            }
            err.println(ReadyLine.summarize(ready, worldSize, (System.nanoTime() - started) / 1e9));
        } finally {
            if (server != null) {
                server.close();
                if (job.scheduler().spansNodes()) {
                    RendezvousFile.remove(rendezvousBase(), job.jobId());
                }
            }
        }
        for (int rank : myRanks) {
            if (onlyRank == null || onlyRank == rank) {
                supervisor.startCommand(rank, command, commandEnv(rank, worldSize, layout, job, shim));
            }
        }
        int status = supervisor.awaitCommands();
        if (status != JobSupervisor.EXIT_RANK_FAILED) {
            layout.awaitSharingTasks(myRanks[0], job.localCount(), loadTimeoutSeconds * 1000L);
            supervisor.finish(job.scheduler().spansNodes() && job.nodeCount() > 1);
        }
        return status;
    }

    private String validate(boolean underScheduler) {
        if (!Files.isRegularFile(data.resolve("manifest.txt"))) {
            return "--data " + data + " is not a prepared dataset (no manifest.txt): run fanstore prep first";
        }
        if (ranks != null && ranks < 1) {
            return "--ranks must be >= 1, got " + ranks;
        }
        int size = ranks == null ? 1 : ranks;
        if (onlyRank != null && (underScheduler || onlyRank < 0 || onlyRank >= size)) {
            return underScheduler ? "--only-rank is for --ranks mode; under a scheduler choose tasks with it"
                    : "--only-rank " + onlyRank + " is outside 0.." + (size - 1);
        }
        if (!underScheduler && replicas >= size && replicas > 0) {
            return "--replicas " + replicas + " needs more than " + replicas + " ranks";
        }
        if (!mount.startsWith("/") || mount.length() < 2 || mount.endsWith("/")) {
            return "--mount must be an absolute path like /fanstore, got '" + mount + "'";
        }
        try {
            RuntimeConfig.Unpack.of(unpack);
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        if (!prefetch.equals("on") && !prefetch.equals("off")) {
            return "--prefetch must be on or off, got '" + prefetch + "'";
        }
        try {
            org.fanstore.runtime.placement.LocalCapacity.parse(localCapacity);
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        if (cacheMb != null && cacheMb < 1) {
            return "--cache-mb must be >= 1";
        }
        if (outputDir != null && !Files.isDirectory(outputDir)) {
            return "--output-dir " + outputDir + " is not a directory";
        }
        return null;
    }

    private List<String> runtimeCommand(int rank, int worldSize, RendezvousFile.Endpoint rv, JobLayout layout,
                                        JobEnvironment job) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(JvmFlags.runtime(System.getenv()));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add("org.fanstore.runtime.RuntimeMain");
        cmd.addAll(new RuntimeConfig(rank, worldSize, rv.host(), rv.port(), data.toAbsolutePath(),
                layout.localDir(rank), layout.shmDir(rank),
                cacheMb != null ? cacheMb : defaultCacheMb(myShare(worldSize, job)), replicas, job.jobId(),
                RuntimeConfig.Unpack.of(unpack), rank == 0 && System.console() != null,
                RuntimeConfig.verboseFrom(System.getenv()), localCapacity, "on".equals(prefetch),
                RankDirectory.JOB_SECRET.in(layout.shmDir(rank))).toArgs());
        return cmd;
    }

    private static int myShare(int worldSize, JobEnvironment job) {
        return job.scheduler().spansNodes() ? 1 : worldSize;
    }

    Map<String, String> commandEnv(int rank, int worldSize, JobLayout layout, JobEnvironment job, Path shim) {
        Map<String, String> env = new HashMap<>();
        String preload = System.getenv("LD_PRELOAD");
        env.put("LD_PRELOAD", preload == null || preload.isBlank() ? shim.toString() : shim + ":" + preload);
        env.put("FANSTORE_MOUNT", mount);
        env.put("FANSTORE_SHM_DIR", layout.shmDir(rank).toString());
        env.put("FANSTORE_RANK", Integer.toString(rank));
        env.put("FANSTORE_SIZE", Integer.toString(worldSize));
        env.put("FANSTORE_JOB_ID", job.jobId());
        return env;
    }

    /** A quarter of RAM, split among the ranks sharing this machine. */
    static long defaultCacheMb(int ranksOnThisMachine) {
        long total = ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getTotalMemorySize();
        return Math.max(64, total / 4 / ranksOnThisMachine >> 20);
    }

    private void teardown(JobSupervisor supervisor, JobLayout layout, int[] myRanks) {
        supervisor.tearDown(5_000);
        if (!keepLocal) {
            layout.removeRanks(myRanks);
        } else {
            err.println("fanstore: kept " + layout.localRoot() + " and " + layout.shmRoot() + " (--keep-local)");
        }
    }

    private Path localBase() {
        if (localDir != null) {
            return localDir.toAbsolutePath();
        }
        String tmp = System.getenv("TMPDIR");
        return Path.of(tmp == null || tmp.isBlank() ? "/tmp" : tmp);
    }

    Path rendezvousBase() {
        return rendezvousDir != null ? rendezvousDir
                : Path.of(System.getProperty("user.home"), ".fanstore", "rendezvous");
    }

    private static String localJobId() {
        String fromEnv = System.getenv("FANSTORE_JOB_ID");
        if (fromEnv != null && !fromEnv.isBlank()) {
            return JobEnvironment.sanitize(fromEnv);
        }
        return "local-" + ProcessHandle.current().pid() + "-"
                + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 24));
    }

    private static int[] range(int n) {
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = i;
        }
        return out;
    }

    List<String> command() {
        return command;
    }

    String mount() {
        return mount;
    }
}
