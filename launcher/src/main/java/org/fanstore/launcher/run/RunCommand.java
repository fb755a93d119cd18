package org.fanstore.launcher.run;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionFiles;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;
import org.fanstore.runtime.RuntimeConfig;
import org.fanstore.runtime.lifecycle.ProcessSignals;
import org.fanstore.runtime.lifecycle.RankLock;
import org.fanstore.runtime.layout.RankDirectory;
import org.fanstore.runtime.membership.JobSecret;
import org.fanstore.launcher.rendezvous.BucketRendezvous;
import org.fanstore.launcher.rendezvous.RendezvousFile;
import org.fanstore.launcher.rendezvous.RendezvousPlace;
import org.fanstore.launcher.rendezvous.RendezvousServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code fanstore run}: the runtimes of this node (or, with --ranks, N ranks on this machine), then the user's
 * command under the shim. Exit status: the command's; {@value JobSupervisor#EXIT_RANK_FAILED} when a runtime
 * rank failed; {@value JobSupervisor#EXIT_OUTPUT_LOST} when the command succeeded but a committed output could not
 * be saved to --output-dir; 2 for bad arguments; 127 when the command is not found, 126 when it cannot be
 * executed; 128+N when the launcher got signal N.
 */
@Command(name = "run", sortOptions = false, mixinStandardHelpOptions = true,
        description = "Serve a prepared dataset under the mount prefix and run CMD with it. Under SLURM "
                    + "/ Open MPI / PMI one runtime per node is started (tasks on a node share it); "
                    + "without a scheduler, --ranks N starts N ranks on this machine as if they were N "
                    + "nodes. CMD gets FANSTORE_RANK and FANSTORE_SIZE: its node and the number of nodes "
                    + "(not task ranks).")
public final class RunCommand implements Callable<Integer> {
    @Option(names = "--data", required = true, paramLabel = "OUT.fs",
            description = "dataset written by fanstore prep: a directory, or s3://BUCKET/PREFIX/NAME.fs (endpoint and"
                    + " credentials from the AWS_* environment or ~/.aws, as the AWS tools take them)")
    String data;

    @Option(names = "--ranks", paramLabel = "N", description = "ranks on this machine (no scheduler); default 1")
    Integer ranks;

    @Option(names = "--local-dir", paramLabel = "DIR", description = "node-local storage (default: $TMPDIR or /tmp)")
    Path localDir;

    @Option(names = "--mount", paramLabel = "PREFIX", defaultValue = "/fanstore",
        description = "default: ${DEFAULT-VALUE}")
    String mount;

    @Option(names = "--cache-mb", paramLabel = "M",
            description = "cache bound per node, tmpfs and local disk together (default: 1/4 of RAM)")
    Long cacheMb;

    @Option(names = "--replicas", paramLabel = "K", defaultValue = "0", description = "extra copies of each partition")
    int replicas;

    @Option(names = "--output-dir", paramLabel = "DIR",
        description = "persistent directory for files written under the mount: each committed file is copied "
                + "there (checksummed, fsynced) and run exits only when all are; without it they are discarded")
    Path outputDir;

    @Option(names = "--stats", paramLabel = "FILE",
            description = "at the end write the job's I/O statistics as JSON to FILE (fields: docs/stats.md; "
                    + "under a scheduler node 0 writes it, with every node's numbers)")
    Path statsFile;

    @Option(names = "--only-rank", paramLabel = "R", description = "run CMD on rank R only (--ranks mode)")
    Integer onlyRank;

    @Option(names = "--unpack", paramLabel = "MODE", defaultValue = "background",
            description = "how local uncompressed files are opened: background (default: read in place in the "
                    + "partition copies, each checked once in the background after ready; a file is copied out only "
                    + "for mmap, fdopen or exec), lazy (the same, checked on first open only), eager (every file "
                    + "copied out before ready: plain per-file descriptors, more disk and a longer load)")
    String unpack;

    @Option(names = "--prefetch", paramLabel = "on|off", defaultValue = "on",
            description = "keep the partitions other ranks hold on local storage too, as room allows "
                    + "(filled in the background after each node's own, readers first), so later epochs read "
                    + "them locally")
    String prefetch;

    @Option(names = "--table-load", paramLabel = "broadcast|read", defaultValue = "broadcast",
            description = "how the dataset's metadata table reaches each node: node 0 reads it and broadcasts it "
                    + "(one read of the shared FS), or every node reads it")
    String tableLoad;

    @Option(names = "--on-node-loss", paramLabel = "continue|end", defaultValue = "continue",
            description = "a node lost after the job started: the others go on reading (continue, default: every "
                    + "byte it held is read from the dataset's home) or every node's job ends (end, exit 3)")
    String onNodeLoss;

    @Option(names = "--local-capacity", paramLabel = "SIZE", defaultValue = "auto",
            description = "most bytes of partitions a node keeps: 500M, 20G, 50%% (of the local file system) "
                    + "or auto (default: its free space at start minus 10%% of its size); the rest is read "
                    + "from peers or the shared FS on each access")
    String localCapacity;

    @Option(names = "--grace", paramLabel = "SECONDS", defaultValue = "10",
            description = "on SIGTERM or ^C the command gets SIGTERM and this long to end (e.g. to write a "
                    + "checkpoint) before SIGKILL; default ${DEFAULT-VALUE}: with the job's own shutdown it fits "
                    + "SLURM's default KillWait of 30 s")
    int graceSeconds;

    @Option(names = "--keep-local", description = "keep node-local copies and shared memory after the job")
    boolean keepLocal;

    @Option(names = "--load-timeout", paramLabel = "SECONDS", defaultValue = "1800",
        description = "default: ${DEFAULT-VALUE}")
    int loadTimeoutSeconds;

    @Option(names = "--join-timeout", paramLabel = "SECONDS", defaultValue = "60",
            description = "under a scheduler, how long every node has to join node 0 before the job stops "
                    + "with a message naming the nodes missing (default: ${DEFAULT-VALUE}; loading is not counted)")
    int joinTimeoutSeconds;

    @Option(names = "--rendezvous-dir", paramLabel = "DIR",
            description = "shared directory where node 0 publishes its address (scheduler mode; default ~/.fanstore,"
                    + " or with an s3:// dataset the dataset's bucket)")
    Path rendezvousDir;

    @Parameters(arity = "1..*", paramLabel = "CMD", description = "the command to run (after --)")
    List<String> command;

    /** How long the runtimes' orderly stop may take after a signal, before teardown kills them. */
    private static final long FINISH_AFTER_SIGNAL_MILLIS = 8_000;

    private final PrintStream err = System.err;
    /** Set once every local runtime said ready; read by the teardown hook's thread. */
    private volatile boolean everyRankReady;
    /** Where the dataset lives; parsed first in {@link #call}. */
    private DatasetLocation dataset;
    /** An s3:// dataset's client and manifest check, running from the start ({@link BucketCheck}); else null. */
    private BucketCheck bucket;
    /** Its client once the check passed: the bucket rendezvous. */
    private ObjectStore store;

    @Override
    public Integer call() throws Exception {
        try {
            dataset = DatasetLocation.dataset(data);
        } catch (IllegalArgumentException e) {
            err.println("fanstore run: --data " + e.getMessage());
            return 2;
        }
        try {
            return runChecked();
        } finally {
            if (bucket != null) {
                bucket.close();
            }
        }
    }

    private int runChecked() throws Exception {
        Optional<JobEnvironment> scheduler = ranks == null ? JobEnvironment.detect(System.getenv()) : Optional.empty();
        String problem = RunOptionsCheck.problem(this, dataset, scheduler.isPresent());
        if (problem != null) {
            err.println("fanstore run: " + problem);
            return 2;
        }
        if (dataset.isObjectStore()) {
            bucket = BucketCheck.start(dataset);
        }
        String notRegular = notRegularPartition();
        if (notRegular != null) {
            err.println("fanstore run: --data " + data + ": " + notRegular);
            return 1;
        }
        CommandLookup.Problem missing = CommandLookup.check(command.get(0), System.getenv("PATH"));
        if (missing != null) {
            err.println("fanstore run: " + missing.message());
            return missing.status();
        }
        Path shim = shimPath();
        if (!Files.isRegularFile(shim)) {
            err.println("fanstore run: the shim " + shim + " is missing: build with scripts/setup-debian.sh build");
            return 2;
        }
        String unloadable = PreloadProbe.problem(shim, preloadWith(shim));
        if (unloadable != null) {
            err.println("fanstore run: " + unloadable);
            return 2;
        }
        JobEnvironment job = scheduler.orElseGet(() -> new JobEnvironment(Scheduler.LOCAL, localJobId(), 0, 1, 0, 1));
        int worldSize = scheduler.isPresent() ? job.nodeCount() : (ranks == null ? 1 : ranks);
        int[] myRanks = scheduler.isPresent() ? new int[] {job.nodeId()} : range(worldSize);
        if (scheduler.isPresent() && !job.ownsRuntime()) {
            return new SharedNodeTask(job, this).run();
        }
        JobLayout layout = JobLayout.create(localBase(), JobLayout.SHM_BASE, job.jobId());
        try {
            layout.lockRanks(myRanks);
        } catch (RankLock.HeldException running) {
            err.println("fanstore run: job " + job.jobId() + " is already running on this node (fanstore run, pid "
                    + running.holder() + "); a nested fanstore run inherits FANSTORE_JOB_ID: unset it or give"
                    + " this job its own");
            return 2;
        }
        JobSupervisor supervisor = new JobSupervisor(err, "continue".equals(onNodeLoss));
        ProcessSignals.onTermination(signal -> {
            supervisor.terminate(signal);
            backstop(signal);
        });
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
        if (outputDir != null && job.nodeId() == 0) {
            InterruptedDrains.clean(outputDir, job.scheduler().spansNodes(), err);
        }
        Duration loadTimeout = Duration.ofSeconds(loadTimeoutSeconds);
        Duration joinTimeout = Duration.ofSeconds(joinTimeoutSeconds);
        boolean spans = job.scheduler().spansNodes();
        Integer refused = spans ? bucketRefused() : null;   // the bucket rendezvous needs the client
        if (refused != null) {
            return refused;
        }
        RendezvousPlace place = spans || job.nodeId() != 0 ? rendezvousPlace() : null;
        RendezvousServer server = null;
        RendezvousFile.Endpoint endpoint;
        JobSecret secret;
        try {
            if (job.nodeId() == 0) {
                secret = JobSecret.generate();
                // Runtimes join first thing, before loading: a node missing is known after the join timeout
                // (NodeJoin watches it; the server waits a little longer so that NodeJoin speaks first).
                // one machine: loopback, so no other host can reach it; under a scheduler the node's interface
                server = RendezvousServer.start(job.scheduler().spansNodes() ? RendezvousServer.defaultBindAddress()
                        : InetAddress.getLoopbackAddress(), worldSize, secret,
                        job.scheduler().spansNodes() ? joinTimeout.plusSeconds(30) : loadTimeout);
                endpoint = new RendezvousFile.Endpoint(server.host(), server.port());
                if (job.scheduler().spansNodes()) {
                    place.publish(job.jobId(), secret, endpoint);
                }
            } else {
                Optional<RendezvousFile.Endpoint> found = NodeJoin.awaitNodeZero(place, job, joinTimeout, err);
                if (found.isEmpty()) {
                    return JobSupervisor.EXIT_RANK_FAILED;
                }
                endpoint = found.get();
                secret = place.readSecret(job.jobId());
            }
            for (int rank : myRanks) {
                Files.createDirectories(layout.shmDir(rank));
                Files.createDirectories(layout.localDir(rank)); // the runtime's java.io.tmpdir (RuntimeCommandLine)
                secret.writePrivate(RankDirectory.JOB_SECRET.in(layout.shmDir(rank)));
            }
            RendezvousFile.Endpoint rv = endpoint;
            supervisor.startRuntimes(myRanks, rank -> RuntimeCommandLine.of(this, rank, worldSize, rv, layout, job),
                    keepLocal);
            if (server != null && job.scheduler().spansNodes()
                    && !NodeJoin.awaitAllNodes(server, supervisor, job, place, joinTimeout, err)) {
                return JobSupervisor.EXIT_RANK_FAILED;
            }
            refused = bucketRefused();   // ran while the runtimes started; a refusal is the job's one line
            if (refused != null) {
                return refused;
            }
            Map<Integer, String> ready = supervisor.awaitReady(loadTimeout.toMillis());
            if (ready == null) {
                return supervisor.terminatedBy() != 0 ? 128 + supervisor.terminatedBy()
                        : JobSupervisor.EXIT_RANK_FAILED;
            }
            everyRankReady = true;
            err.println(ReadyLine.summarize(ready, worldSize, (System.nanoTime() - started) / 1e9,
                    dataset.isObjectStore() ? "the object store" : "the shared FS"));
            if (outputDir == null && job.nodeId() == 0) {
                err.println("fanstore: no --output-dir: files the job writes under " + mount
                        + " are discarded when it ends");
            }
        } finally {
            if (server != null) {
                server.close();
                if (job.scheduler().spansNodes()) {
                    place.remove(job.jobId());
                }
            }
        }
        for (int rank : myRanks) {
            if (onlyRank == null || onlyRank == rank) {
                supervisor.startCommand(rank, command, commandEnv(rank, worldSize, layout, job, shim));
            }
        }
        int status = supervisor.awaitCommands(graceSeconds * 1000L);
        if (supervisor.terminatedBy() != 0) {
            // Still the orderly stop (a runtime's own end-of-job work runs), but within KillWait.
            supervisor.finish(false, FINISH_AFTER_SIGNAL_MILLIS);
        } else if (status != JobSupervisor.EXIT_RANK_FAILED) {
            layout.awaitSharingTasks(myRanks[0], job.localCount(), loadTimeoutSeconds * 1000L);
            supervisor.finish(job.scheduler().spansNodes() && job.nodeCount() > 1, Long.MAX_VALUE);
            reportStats(supervisor, job, worldSize, status, (System.nanoTime() - started) / 1e9);
        }
        // however the command ended: what the drain could not save is named, and fails a successful job
        if (RuntimeConfig.verboseFrom(System.getenv())) {
            supervisor.drainSummaries().forEach(line -> err.println("fanstore " + line));
        }
        int lost = supervisor.outputsLost();
        if (lost > 0) {
            err.println("fanstore: " + lost + " output file(s) were not saved to " + outputDir + " (named above)");
            if (status == 0) {
                status = JobSupervisor.EXIT_OUTPUT_LOST;
            }
        }
        return status;
    }

    /**
     * After a signal, the job must be gone before SLURM's KillWait (30 s by default) ends in SIGKILL, which would
     * leave /dev/shm and the local directory behind: the main thread may be inside a wait that does not watch
     * for signals (the rendezvous, a slow start), so a daemon timer exits the launcher, running the teardown
     * hook, when grace + the orderly stop have passed.
     */
    private void backstop(int signal) {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(graceSeconds * 1000L + FINISH_AFTER_SIGNAL_MILLIS + 2_000);
            } catch (InterruptedException e) {
                return;
            }
            err.println("fanstore: still stopping after " + JobSupervisor.signalName(signal) + "; exiting now");
            System.exit(128 + signal);
        }, "fanstore-signal-backstop");
        t.setDaemon(true);
        t.start();
    }

    /** The job's one-line I/O summary, and the --stats document where this node has every rank's numbers. */
    private void reportStats(JobSupervisor supervisor, JobEnvironment job, int worldSize, int status, double wall)
            throws InterruptedException {
        JobStats stats = new JobStats();
        stats.add(supervisor.statsLines());
        stats.lost(supervisor.lostRanks());
        stats.home(datasetArgument());
        if (stats.isEmpty()) {
            return;
        }
        err.println(stats.summary(worldSize));
        if (statsFile != null && job.nodeId() == 0) {
            try {
                stats.write(statsFile, job.jobId(), datasetArgument(), worldSize, wall, status, command);
            } catch (IOException e) {
                err.println("fanstore: cannot write --stats " + statsFile + ": " + e.getMessage());
            }
        }
    }

    /** Null when the dataset is not in a bucket or its check passed; else the check's line said, and its status. */
    private Integer bucketRefused() throws InterruptedException {
        if (bucket == null) {
            return null;
        }
        BucketCheck.Outcome o = bucket.await();
        if (o.problem() == null) {
            store = o.store();
            return null;
        }
        err.println("fanstore run: " + o.problem());
        bucket = null;   // said once
        return o.status();
    }

    /** Where node 0 publishes under a scheduler: --rendezvous-dir, else an s3:// dataset's bucket, else ~. */
    private RendezvousPlace rendezvousPlace() {
        return rendezvousDir == null && store != null ? new BucketRendezvous(store, dataset)
                : RendezvousPlace.directory(rendezvousBase());
    }

    /** The dataset as the runtimes and --stats get it: an absolute path, or the s3:// location as given. */
    String datasetArgument() {
        return dataset.isObjectStore() ? dataset.toString() : dataset.path().toAbsolutePath().toString();
    }

    /** Refused here, by stat alone, before any runtime starts: a FIFO partition would block its open. */
    private String notRegularPartition() {
        if (dataset.isObjectStore()) {
            return null;
        }
        try {
            return PartitionFiles.firstNotRegular(dataset.path(), Manifest.read(dataset.path()));
        } catch (IOException e) {
            return null; // a bad manifest is reported by the runtime, as before
        }
    }

    /** The shim: FANSTORE_SHIM when set (a node-local copy, a path a container binds), else the build's. */
    static Path shimPath() {
        String set = System.getenv("FANSTORE_SHIM");
        if (set != null && !set.isBlank()) {
            return Path.of(set).toAbsolutePath();
        }
        return Path.of(System.getenv().getOrDefault("FANSTORE_HOME", "."), "interpose-native", "build",
                "libfanstore.so").toAbsolutePath();
    }

    /** The command's LD_PRELOAD: the shim first, then whatever the user preloads. */
    private static String preloadWith(Path shim) {
        String preload = System.getenv("LD_PRELOAD");
        return preload == null || preload.isBlank() ? shim.toString() : shim + ":" + preload;
    }

    /** FANSTORE_RANK/FANSTORE_SIZE are the node's rank in the runtimes' world: tasks of one node share them. */
    Map<String, String> commandEnv(int rank, int worldSize, JobLayout layout, JobEnvironment job, Path shim) {
        Map<String, String> env = new HashMap<>();
        env.put("LD_PRELOAD", preloadWith(shim));
        env.put("FANSTORE_MOUNT", mount);
        env.put("FANSTORE_SHM_DIR", layout.shmDir(rank).toString());
        env.put("FANSTORE_RANK", Integer.toString(rank));
        env.put("FANSTORE_SIZE", Integer.toString(worldSize));
        env.put("FANSTORE_JOB_ID", job.jobId());
        return env;
    }

    private void teardown(JobSupervisor supervisor, JobLayout layout, int[] myRanks) {
        // Before ready no command ran and nothing was written: an orderly stop has nothing to save, and a runtime
        // still loading (in a collective with a rank that failed) would not answer it.
        supervisor.tearDown(everyRankReady ? 5_000 : 0);
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
