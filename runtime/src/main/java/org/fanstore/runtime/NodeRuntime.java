package org.fanstore.runtime;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.function.Consumer;
import org.fanstore.prep.format.Compression;
import org.fanstore.prep.format.FileModes;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.runtime.cache.MaterializedCache;
import org.fanstore.runtime.cache.ReferenceBits;
import org.fanstore.runtime.layout.RankDirectory;
import org.fanstore.runtime.commit.ClusterCommitter;
import org.fanstore.runtime.membership.JobSecret;
import org.fanstore.runtime.world.MpiWorld;
import org.fanstore.runtime.liveness.RankFailedException;
import org.fanstore.runtime.fetch.CountingFetchSource;
import org.fanstore.runtime.fetch.RemoteFetcher;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.runtime.open.OpenService;
import org.fanstore.runtime.open.OpenTimer;
import org.fanstore.runtime.open.OpenWorkers;
import org.fanstore.runtime.output.DirectoryDrain;
import org.fanstore.runtime.output.FetchedOutputData;
import org.fanstore.runtime.output.LocalOutputNamespace;
import org.fanstore.runtime.output.OutputApplier;
import org.fanstore.runtime.output.OutputData;
import org.fanstore.runtime.output.OutputDrain;
import org.fanstore.runtime.output.OutputFetchSource;
import org.fanstore.runtime.output.OutputJournal;
import org.fanstore.runtime.output.OutputService;
import org.fanstore.runtime.output.HeldOutputs;
import org.fanstore.runtime.placement.BodyCheck;
import org.fanstore.runtime.metadata.TableLanding;
import org.fanstore.runtime.RuntimeConfig.TableLoad;
import org.fanstore.runtime.slices.DecodedArenas;
import org.fanstore.runtime.placement.BodyIndex;
import org.fanstore.runtime.placement.LocalCapacity;
import org.fanstore.runtime.placement.LocalPartitions;
import org.fanstore.runtime.placement.Placement;
import org.fanstore.runtime.slices.SlicePublisher;
import org.fanstore.runtime.slices.Unpacker;
import org.fanstore.runtime.fill.Fill;
import org.fanstore.runtime.fill.FillScheduler;
import org.fanstore.runtime.fill.Governor;
import org.fanstore.runtime.fill.KeepPlan;
import org.fanstore.runtime.fill.source.PeerSource;
import org.fanstore.runtime.fill.source.RangeSource;
import org.fanstore.runtime.fill.source.HomeSource;
import org.fanstore.runtime.home.DatasetHome;
import org.fanstore.runtime.home.HomeStart;
import org.fanstore.runtime.shm.OpRouter;
import org.fanstore.runtime.shm.RequestHandler;
import org.fanstore.runtime.shm.ShmServer;
import org.fanstore.runtime.shm.SliceMap;
import org.fanstore.runtime.stats.OpenKind;
import org.fanstore.runtime.stats.RankStats;
import org.fanstore.runtime.stats.ShimCounters;
import org.fanstore.runtime.stats.StatsTicker;

/**
 * One rank's life: join the world, land the dataset's metadata table (rank 0 reads it, every rank receives it
 * and publishes it for the shim), check the partition files this rank is responsible for, start serving the shim
 * (shared memory) and the other ranks (remote fetch), and only then, past a barrier, start the fill
 * (runtime/fill/README.md): the command starts as soon as the metadata is ready, and every byte it lacks comes
 * through the fill. Everything is built in dependency order and registered as it is ({@link #opened}); close
 * undoes it in reverse.
 */
final class NodeRuntime implements AutoCloseable {
    private static final int SLOTS = 64;
    private static final int SLOT_BYTES = 8192;
    private static final int RING_BYTES = 64 << 10;
    /** Output journal size: sparse in /dev/shm, ~64 bytes a record, so about a million commits. */
    private static final int JOURNAL_BYTES = 64 << 20;

    private final RuntimeConfig config;
    /** Everything this rank opened or started, in the order it did: closed in reverse ({@link #close}). */
    private final List<AutoCloseable> toClose = new ArrayList<>();

    private MpiWorld world;
    private Fill fill;
    private Runnable stopPublishing = () -> { };
    private String readyFields = "";
    /** Null without --output-dir. */
    private DirectoryDrain drain;
    private volatile LocalOutputNamespace outputNamespace;
    private volatile OutputService outputService;
    /** The drain's final pass, run in {@link #finish} before the table is unmapped. */
    private DirectoryDrain.Report drainReport;
    private final HeldOutputs heldOutputs = objectId -> {
        LocalOutputNamespace ns = outputNamespace;
        Path f = ns == null ? null : ns.heldFile(objectId);
        return f != null && Files.isRegularFile(f) ? f : null;
    };
    /** Completed with the first world failure once the orderly end has begun. */
    private final CompletableFuture<RankFailedException> failedWhileFinishing = new CompletableFuture<>();
    private volatile boolean finishing;
    private final CompletableFuture<RankFailedException> nodeLost = new CompletableFuture<>(); // NodeLoss: left
    private RankStats stats;
    private volatile List<String> statsLines = List.of();

    /** The dataset once its table landed: placement, entries, where bodies lie, which are local and checked. */
    private record Dataset(Manifest manifest, Placement placement, MetadataTable table, BodyIndex bodies,
                           LocalPartitions local, BodyCheck check) {
    }

    /** What the read path's later users need: the open workers, the eager unpacker, the service, the slices. */
    private record ReadPath(ExecutorService workers, Unpacker unpacker, OpenService open, SlicePublisher slices) {
    }

    private NodeRuntime(RuntimeConfig config) {
        this.config = config;
    }

    static NodeRuntime start(RuntimeConfig config) throws IOException {
        NodeRuntime rt = new NodeRuntime(config);
        try {
            rt.load();
            return rt;
        } catch (IOException | RuntimeException e) {
            rt.abandon();
            throw e;
        }
    }

    /**
     * After a failed load: releases what this rank made, but leaves the world without MPI.Finalize. Peers may be
     * in a collective this rank will never join, so Finalize would only wait out its bound; the launcher sees this
     * rank's error and exit, and ends the job.
     */
    private void abandon() {
        world = null;
        close();
    }

    /** The stages in dependency order; each registers what it opens ({@link #opened}), so close undoes them. */
    private void load() throws IOException {
        long started = System.nanoTime();
        Files.createDirectories(config.shmDir());
        JobSecret secret = JobSecret.read(config.secretFile());  // once, for the join and the fetch service
        // asked first, before anything of this rank takes local disk (the home's threads below load lz4-java's
        // library into it): --local-capacity auto is what is free at start
        long capacity = LocalCapacity.parse(config.localCapacity())
                .budget(Files.getFileStore(config.localDir()));   // the rank directory: its parts/ is made later
        HomeStart homeStart = HomeStart.begin(config.data(), config.localDir());   // while this rank joins
        try {
            world = MpiWorld.init(config.rank(), config.size(), config.rendezvousHost(), config.rendezvousPort(),
                    secret, INIT_TIMEOUT);
        } catch (IOException | RuntimeException e) {
            homeStart.abandon();
            throw e;
        }
        DatasetHome home = opened(homeStart.await().home());
        Manifest manifest = homeStart.await().manifest();
        HomeSource homeSource = checkHeldPartitions(home, manifest, homeStart);   // while the table lands
        long tableStarted = System.nanoTime();
        Dataset data = landTable(home, manifest);
        long landedTable = System.nanoTime();
        homeStart.awaitChecks();
        stats = new RankStats(config.rank());
        stats.attachHome(home);
        // one fetch service for both: partition bodies by entry index, committed outputs by their own ids
        RemoteFetcher fetcher = opened(RemoteFetcher.start(world,
                new CountingFetchSource(new OutputFetchSource(heldOutputs, data.local()), stats), secret));
        fetcher.timeServing(stats.serveTimes());
        buildFill(data, capacity, homeSource, fetcher);
        stats.attach(fill, started);
        ReadPath read = startReadPath(data);
        OutputService outputs = startOutputs(data.table(), read.workers(), fetcher,
                RankDirectory.CACHE_DIR.in(config.shmDir()));
        startControl(read.open(), outputs);
        startFill(read.slices());
        long unpacked = System.nanoTime();
        if (config.unpack() == RuntimeConfig.Unpack.EAGER) {
            // plain per-file descriptors for every local raw file: this mode waits for the rank's own share
            awaitOwnShare(data.placement(), read.unpacker());
        }
        long waited = System.nanoTime();
        Files.createFile(RankDirectory.READY.in(config.shmDir()));

        long now = System.nanoTime();
        KeepPlan plan = fill.plan();
        readyFields = "files=" + manifest.files() + " dirs=" + manifest.dirs() + " bytes=" + manifest.rawBytes()
                + " entries=" + data.table().entryCount() + " meta_bytes=" + data.table().tableLength()
                + " local_bytes=" + plan.keptBytes() + " peer_bytes=" + plan.peerBytes()
                + " sharedfs_bytes=" + plan.sharedFsBytes()
                + " load_ms=" + ms(now - started) + " init_ms=" + ms(tableStarted - started)
                + " table_ms=" + ms(landedTable - tableStarted) + " unpack_ms=" + ms(waited - unpacked)
                + " serve_ms=" + ms(unpacked - landedTable);
        if (config.verbose()) {
            System.err.println("fanstore rank " + config.rank() + ": " + readyFields);
        }
        stats.loaded(readyFields);
        StatsTicker ticker = StatsTicker.fromEnvironment(System.getenv(), stats);
        if (ticker != null) {
            opened(ticker);
        }
    }

    /**
     * Lands the metadata table (TableLanding; from a bucket, the rank that reads it GETs it first: runtime/home) and
     * refuses a partition shorter than its bodies.
     */
    private Dataset landTable(DatasetHome home, Manifest manifest) throws IOException {
        Placement placement = new Placement(config.size(), config.replicas());
        Files.createDirectories(RankDirectory.PARTS_DIR.in(config.localDir()));
        Path filesDir = Files.createDirectories(RankDirectory.FILES_DIR.in(config.localDir()));
        LocalPartitions local = opened(new LocalPartitions());
        boolean readItself = config.tableLoad() == TableLoad.READ;
        MetadataTable table = opened(home.landTable(config.rank() == 0 || readItself, dir -> TableLanding.land(world,
                dir, manifest, RankDirectory.META_TABLE.in(config.shmDir()), config.rank(), config.size(),
                config.replicas(), filesDir.toString().getBytes(StandardCharsets.UTF_8), readItself,
                COLLECTIVE_TIMEOUT)));
        BodyIndex bodies = new BodyIndex(table);
        String overrun = bodies.firstOverrun(manifest.partitions());
        if (overrun != null) {
            throw new IOException(overrun + " (" + home.name() + "); run fanstore verify " + home.name());
        }
        local.attach(bodies);
        BodyCheck check = new BodyCheck(table, bodies, local, config.rank(), home.name());
        local.attach(check);
        return new Dataset(manifest, placement, table, bodies, local, check);
    }

    /**
     * The home's source of the partitions (shared FS or bucket), and the checks of those this rank is responsible
     * for started (awaited before the command starts): a missing or altered partition is refused before the command
     * starts (runtime/fill/README.md).
     */
    private HomeSource checkHeldPartitions(DatasetHome home, Manifest manifest, HomeStart start) {
        Map<Integer, PartitionInfo> infos = new HashMap<>();
        manifest.partitions().forEach(p -> infos.put(KeepPlan.id(p), p));
        HomeSource source = home.source(infos::get);
        Placement placement = new Placement(config.size(), config.replicas());   // as landTable's
        List<Integer> held = new ArrayList<>();
        for (PartitionInfo p : manifest.partitions()) {
            if (p.broadcast() || placement.holds(config.rank(), p.index())) {
                held.add(KeepPlan.id(p));
            }
        }
        start.check(source, held);   // in parallel: from a bucket each check is a round trip
        return source;
    }

    /** What this node keeps (the keep plan) and the fill that brings it, from the home or a peer; not started. */
    private void buildFill(Dataset data, long capacity, HomeSource home, RemoteFetcher fetcher) {
        KeepPlan plan = KeepPlan.of(data.manifest().regularPartitions(), data.manifest().broadcastPartitions(),
                data.placement(), config.rank(), capacity, config.prefetch());
        Map<Integer, RangeSource> sources = new HashMap<>();
        sources.put(FillScheduler.HOME, home);
        for (int r = 0; r < config.size(); r++) {
            if (r != config.rank()) {
                sources.put(r, new PeerSource(fetcher, r, PEER_STALL));
            }
        }
        Governor governor = new Governor(Governor.Config.fromProperties(), System::nanoTime);
        fill = new Fill(plan, governor, sources, data.local(), RankDirectory.PARTS_DIR.in(config.localDir()),
                data.bodies(), data.check(), capacity, config.rank(), config.verbose(),
                RankDirectory.PREFETCHED.in(config.shmDir()));
        data.local().attach(fill);
    }

    /**
     * The read path: the materialised cache with its reference bits and the shim's counters, the open workers, the
     * unpacker, the open service, and the slices (slices.map, the publisher, decoded copies; docs/slices.md).
     */
    private ReadPath startReadPath(Dataset data) throws IOException {
        MetadataTable table = data.table();
        ReferenceBits refs = ReferenceBits.create(RankDirectory.CACHE_REF.in(config.shmDir()),
                table.entryCount(), MaterializedCache.LOCAL_MIN_BYTES);
        MaterializedCache cache = new MaterializedCache(RankDirectory.CACHE_DIR.in(config.shmDir()),
                RankDirectory.LOCAL_CACHE_DIR.in(config.localDir()), config.cacheMb() << 20, refs,
                PIN_GRACE_NANOS, i -> new String(table.key(i), StandardCharsets.UTF_8),
                line -> System.err.println("fanstore rank " + config.rank() + ": " + line));
        stats.attach(cache, ShimCounters.create(RankDirectory.SHIM_COUNTERS.in(config.shmDir())));
        ExecutorService workers = OpenWorkers.start(SLOTS, r -> daemon("fanstore-open", r));
        opened(workers::shutdownNow);
        Unpacker unpacker = opened(new Unpacker(RankDirectory.FILES_DIR.in(config.localDir()), table, data.bodies(),
                data.local(), data.check()));
        OpenService open = new OpenService(table, data.bodies(), data.local(), fill, cache, unpacker, config.rank(),
                workers, FETCH_TIMEOUT, stats);
        SliceMap sliceMap = SliceMap.create(RankDirectory.SLICE_MAP.in(config.shmDir()),
                data.manifest().partitions().size(), table.entryCount());
        SlicePublisher slices = opened(new SlicePublisher(table, data.bodies(), data.local(), data.check(), sliceMap,
                data.manifest().regularPartitions().size(), config.unpack() != RuntimeConfig.Unpack.EAGER));
        if (config.unpack() != RuntimeConfig.Unpack.EAGER && data.manifest().compress() != Compression.NONE) {
            // LZ4 partitions this node keeps are decoded once into copies read as slices (DecodedArenas), out of
            // what the keep plan leaves of --local-capacity. A dataset prepped without compression has no LZ4 body:
            // no arenas, so no two passes over every entry and no two per-entry arrays before ready (0.6 s and
            // 170 MB at 14.2M files); a forged manifest that hides LZ4 bodies only sends them to the per-open path.
            DecodedArenas decoded = opened(DecodedArenas.create(table, data.bodies(), data.local(), data.check(),
                    config.rank()));
            slices.attach(decoded);
            decoded.roomFrom(fill::reserve, fill::unreserve);
            decoded.placesFrom(fill::copyPath);
        }
        open.attach(slices);
        // each partition becomes slices as it completes, on the fill's publish thread (docs/slices.md)
        fill.whenAdded(config.unpack() == RuntimeConfig.Unpack.BACKGROUND ? slices::publishPulled
                : slices::addDecodedCopy);
        return new ReadPath(workers, unpacker, open, slices);
    }

    /** ctl: the shim's requests, each op to its service ({@link OpRouter}); output opens are timed as OUTPUT. */
    private void startControl(OpenService open, OutputService outputs) throws IOException {
        RequestHandler outputOpens = (request, responder) ->
                outputs.handle(request, new OpenTimer(responder, stats).kind(OpenKind.OUTPUT, 0));
        opened(ShmServer.create(RankDirectory.CONTROL_FILE.in(config.shmDir()), SLOTS, SLOT_BYTES, RING_BYTES,
                new OpRouter(open, outputOpens, outputs::handle), true));
    }

    /** Past a barrier (every rank serves before any fill asks a peer), the fill starts; it closes before them. */
    private void startFill(SlicePublisher slices) throws IOException {
        world.barrier(COLLECTIVE_TIMEOUT);
        // closed in reverse: publishing stops at its next entry first, so the fill's publish thread ends at once
        opened(fill);
        stopPublishing = slices::stopPublishing;
        opened(stopPublishing::run);
        fill.start();
    }

    /** --unpack eager: waits (bounded) for this rank's own partitions, then unpacks their raw files. */
    private void awaitOwnShare(Placement placement, Unpacker unpacker) throws IOException {
        try {
            if (!fill.awaitComplete(p -> p < 0 || placement.holds(config.rank(), p),
                    System.nanoTime() + COLLECTIVE_TIMEOUT.toNanos())) {
                throw new IOException("rank " + config.rank() + ": this rank's partitions were not local after "
                        + COLLECTIVE_TIMEOUT.toMinutes() + " minutes (--unpack eager waits for them); check the"
                        + " shared file system, or use --unpack background");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for this rank's partitions", e);
        }
        unpacker.unpackAll();
    }

    /**
     * The write path: the upper directory (where the shim keeps this rank's outputs), the journal the shim reads,
     * this rank's view of the output namespace, the drain to --output-dir and the service that answers the shim.
     * Commits go through the path's owner rank (ClusterCommitter; a world of one decides in place without MPJ); the
     * applier mirrors other ranks' records into the upper and wakes the drain; readers of an output held by
     * another rank get a fetched read-only copy.
     */
    private OutputService startOutputs(MetadataTable table, ExecutorService workers, RemoteFetcher fetcher,
                                       Path cacheDir) throws IOException {
        Path upperDir = Files.createDirectories(RankDirectory.UPPER_DIR.in(config.localDir()));
        Files.setPosixFilePermissions(upperDir, RankDirectory.UPPER_DIR.permissions());
        OutputJournal journal = opened(OutputJournal.create(RankDirectory.OUTPUT_JOURNAL.in(config.shmDir()),
                config.rank(), upperDir, JOURNAL_BYTES));
        LocalOutputNamespace namespace = new LocalOutputNamespace(table, journal, config.rank(), upperDir);
        outputNamespace = namespace;
        if (config.outputDir() != null) {
            drain = new DirectoryDrain(config.outputDir(), upperDir, config.rank(), config.size(), namespace,
                    key -> isInputDir(table, key)).start();
        }
        OutputApplier applier = new OutputApplier(namespace, upperDir, drain != null ? drain : OutputDrain.NONE,
                config.rank());
        // closed after the final barrier (finish), when no rank commits any more
        ClusterCommitter committer = opened(ClusterCommitter.start(world, applier));
        OutputData data = new FetchedOutputData(config.rank(), heldOutputs, fetcher, cacheDir, config.outputDir(),
                world::lostRanks);
        outputService = new OutputService(namespace, committer, applier, data, upperDir, config.rank(), workers,
                FETCH_TIMEOUT);
        return outputService;
    }

    private static boolean isInputDir(MetadataTable table, String key) {
        int idx = table.lookup(key.getBytes(StandardCharsets.UTF_8));
        return idx >= 0 && FileModes.isDirectory(table.mode(idx));
    }

    /** Registers c to be closed at the end, after everything registered later ({@link #close}). */
    private <T extends AutoCloseable> T opened(T c) {
        toClose.add(c);
        return c;
    }

    private static Thread daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    private static long ms(long nanos) {
        return nanos / 1_000_000;
    }

    String readyFields() {
        return readyFields;
    }

    /**
     * After {@link #finish}: the drain's final pass (at most {@code DRAIN_TIMEOUT}) mirrors this rank's upper
     * directory as the commands left it; returns the report lines for the launcher, one per file of that tree the
     * pass could not save, then a summary.
     */
    List<String> finishOutputs() {
        List<String> lines = new ArrayList<>();
        if (drain != null) {
            DirectoryDrain.Report report = drainReport != null ? drainReport : drain.finish(DRAIN_TIMEOUT);
            Map<String, String> failed = new TreeMap<>(outputService.refused());   // removed after a refusal
            failed.putAll(report.failed());
            failed.forEach((key, why) -> lines.add(RuntimeReport.OUTPUT_FAILED
                    + RuntimeReport.printable(key) + "\t" + RuntimeReport.printable(why)));
            NodeLoss.lostOutputs(config, nodeLost.isDone() ? nodeLost.join().ranks() : new int[0], outputNamespace);
            lines.add(RuntimeReport.OUTPUT_DRAINED + "files=" + report.copiedFiles() + " bytes="
                    + report.copiedBytes() + " ms=" + ms(report.busyNanos()));
            drain.close();
        }
        return lines;
    }

    /**
     * From now on (after ready) a failed world ends this rank through {@code fatal}: a peer that died, or a fetch
     * that failed or timed out (the world is unusable after it), while the job runs. Silently serving on would
     * leave readers with EIO and the job exiting 0. During the orderly end a failure only cuts the final wait
     * short: this node's commands are done, and the rank that failed reports on its own node.
     */
    void failWith(Consumer<RankFailedException> fatal, Consumer<String> lostLine) {
        if (world == null) {
            return;
        }
        if (config.onNodeLoss() == RuntimeConfig.OnNodeLoss.CONTINUE) {
            world.onLoss(e -> nodeLost.complete(NodeLoss.goOn(config, e, fill, stats, lostLine)));
        }
        world.onFailure(e -> {
            if (finishing) {
                failedWhileFinishing.complete(e);
            } else {
                fatal.accept(e);
            }
        });
        world.watchPeers(WATCH_INTERVAL);
    }

    /** Every rank's statistics line after {@link #finish} (only this rank's when the exchange failed). */
    List<String> statsLines() {
        return statsLines.isEmpty() && stats != null ? List.of(stats.line()) : statsLines;
    }

    /**
     * The orderly end of a job: waits until every rank is done (its readers may still fetch from us), then
     * closes. A dead peer ends the wait within about a second (the liveness watchdog; niodev alone would leave
     * the barrier waiting); a live but idle one is waited for up to {@code FINISH_TIMEOUT}.
     */
    void finish() {
        finishing = true;
        if (world != null && toClose.size() > 0) {
            Runnable stopFill = () -> {
                if (fill != null) {
                    stopPublishing.run();
                    fill.close();
                }
            };
            if (world.hasLeft()) {
                stopFill.run();  // no barrier, no exchange: the other survivors no longer share a world
            } else {
                statsLines = FinalBarrier.await(config.rank(), world, stopFill, stats, failedWhileFinishing, nodeLost);
            }
        }
        if (drain != null) {
            // the final pass reads the table and the namespace, which close() unmaps; every rank's commands have
            // ended and (after the barrier) nothing commits any more
            drainReport = drain.finish(DRAIN_TIMEOUT);
        }
        close();
    }

    @Override
    public void close() {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            AutoCloseable c = toClose.get(i);
            try {
                c.close();
            } catch (Exception e) {
                System.err.println("fanstore rank " + config.rank() + ": while stopping: " + e.getMessage());
            }
        }
        toClose.clear();
        if (world != null) {
            world.finalizeWorld(SERVICE_CLOSE);
            world = null;
        }
    }
}
