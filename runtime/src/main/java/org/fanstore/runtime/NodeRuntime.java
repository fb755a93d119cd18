package org.fanstore.runtime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.LongConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.PartitionReader;
import org.fanstore.runtime.cache.MaterializedCache;
import org.fanstore.runtime.cache.ReferenceBits;
import org.fanstore.runtime.index.IndexCodec;
import org.fanstore.runtime.index.NamespaceBuilder;
import org.fanstore.runtime.layout.RankDirectory;
import org.fanstore.runtime.mpi.JobSecret;
import org.fanstore.runtime.mpi.MpiWorld;
import org.fanstore.runtime.mpi.RemoteFetcher;
import org.fanstore.runtime.open.OpenService;
import org.fanstore.runtime.placement.IndexRecord;
import org.fanstore.runtime.placement.LocalCapacity;
import org.fanstore.runtime.placement.LocalPartitions;
import org.fanstore.runtime.placement.PartitionLoader;
import org.fanstore.runtime.placement.PartitionPuller;
import org.fanstore.runtime.placement.Placement;
import org.fanstore.runtime.placement.ReaderDemand;
import org.fanstore.runtime.placement.Unpacker;
import org.fanstore.runtime.shm.ShmServer;

/**
 * One rank's life: join the world, load this rank's partitions, all-gather the index, publish the metadata
 * table, then serve the shim (shared memory) and the other ranks (remote fetch) until closed. The order
 * matters: the table is published before the control file exists, and every rank passes a barrier after its
 * fetch service is up, so no reader can ask a rank that is not yet serving.
 */
final class NodeRuntime implements AutoCloseable {
    private static final Duration INIT_TIMEOUT = Duration.ofMinutes(2);
    private static final Duration COLLECTIVE_TIMEOUT = Duration.ofMinutes(10);
    private static final Duration FETCH_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration FINISH_TIMEOUT = Duration.ofHours(48);
    private static final int SLOTS = 64;
    private static final int SLOT_BYTES = 8192;
    private static final int RING_BYTES = 64 << 10;
    private static final int OPEN_WORKERS = 4;

    private final RuntimeConfig config;
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private MpiWorld world;
    private PartitionPuller puller;
    private String readyFields = "";

    private NodeRuntime(RuntimeConfig config) {
        this.config = config;
    }

    static NodeRuntime start(RuntimeConfig config) throws IOException {
        NodeRuntime rt = new NodeRuntime(config);
        try {
            rt.load();
            return rt;
        } catch (IOException | RuntimeException e) {
            rt.close();
            throw e;
        }
    }

    private void load() throws IOException {
        long started = System.nanoTime();
        Files.createDirectories(config.shmDir());
        world = MpiWorld.init(config.rank(), config.size(), config.rendezvousHost(), config.rendezvousPort(),
                INIT_TIMEOUT);
        Manifest manifest = Manifest.read(config.data());
        Placement placement = new Placement(config.size(), config.replicas());
        PartitionLoader loader = new PartitionLoader(config.data(), manifest, config.localDir());
        LocalPartitions local = new LocalPartitions();
        toClose.add(local);

        List<PartitionInfo> held = PartitionLoader.heldBy(manifest, placement, config.rank());
        List<IndexRecord> mine = new ArrayList<>();
        try (Progress progress = Progress.of(config.progress(), held.stream().mapToLong(PartitionInfo::bytes).sum())) {
            for (PartitionInfo info : held) {
                int id = info.broadcast() ? IndexRecord.broadcastPartition(info.index()) : info.index();
                try (PartitionReader reader = loader.copy(info, progress)) {
                    local.add(id, reader.file());
                    List<IndexRecord> records = loader.index(reader, id);
                    if (NamespaceBuilder.contributes(config.rank(), id, placement)) {
                        mine.addAll(records);
                    }
                }
            }
        }
        long copied = System.nanoTime();
        byte[][] all = world.allGather(IndexCodec.encode(mine), COLLECTIVE_TIMEOUT);
        mine = null;
        long gathered = System.nanoTime();
        NamespaceBuilder.Namespace ns = NamespaceBuilder.publish(all, placement, config.rank(),
                RankDirectory.META_TABLE.in(config.shmDir()), loader.filesDir());
        all = null;
        long published = System.nanoTime();
        toClose.add(ns.table());
        local.attach(ns.bodies());

        RemoteFetcher fetcher = RemoteFetcher.start(world, local, JobSecret.read(config.secretFile()));
        toClose.add(0, fetcher);
        ReferenceBits refs = ReferenceBits.create(RankDirectory.CACHE_REF.in(config.shmDir()),
                ns.table().entryCount());
        Path cacheDir = RankDirectory.CACHE_DIR.in(config.shmDir());
        MaterializedCache cache = new MaterializedCache(cacheDir, config.cacheMb() << 20, refs);
        ExecutorService workers = Executors.newFixedThreadPool(OPEN_WORKERS, r -> {
            Thread t = new Thread(r, "fanstore-open");
            t.setDaemon(true);
            return t;
        });
        toClose.add(0, workers::shutdownNow);
        Unpacker unpacker = new Unpacker(loader.filesDir(), ns.table(), ns.bodies(), local);
        toClose.add(0, unpacker);
        ReaderDemand demand = new ReaderDemand();
        OpenService open = new OpenService(ns.table(), ns.bodies(), local, fetcher, cache, unpacker, placement,
                config.rank(), workers, FETCH_TIMEOUT, cacheDir, demand);
        toClose.add(0, ShmServer.create(RankDirectory.CONTROL_FILE.in(config.shmDir()), SLOTS, SLOT_BYTES, RING_BYTES,
                open, true));
        if (config.unpack() == RuntimeConfig.Unpack.EAGER) {
            unpacker.unpackAll();
        }
        long unpacked = System.nanoTime();
        world.barrier(COLLECTIVE_TIMEOUT);
        Files.createFile(RankDirectory.READY.in(config.shmDir()));

        if (config.unpack() == RuntimeConfig.Unpack.BACKGROUND) {
            unpacker.startBackground(config.rank(), config.verbose());
        }
        if (config.prefetch()) {
            puller = new PartitionPuller(manifest, placement, config.rank(), local, fetcher, loader.partsDir(),
                    LocalCapacity.parse(config.localCapacity()), demand, FETCH_TIMEOUT, config.shmDir(),
                    config.verbose());
            toClose.add(0, puller);
            puller.start();
        }

        long now = System.nanoTime();
        readyFields = "files=" + manifest.files() + " dirs=" + manifest.dirs() + " bytes=" + manifest.rawBytes()
                + " entries=" + ns.table().entryCount() + " meta_bytes=" + ns.tableBytes()
                + " load_ms=" + ms(now - started) + " copy_ms=" + ms(copied - started)
                + " gather_ms=" + ms(gathered - copied) + " table_ms=" + ms(published - gathered)
                + " unpack_ms=" + ms(unpacked - published) + " serve_ms=" + ms(now - unpacked);
        if (config.verbose()) {
            System.err.println("fanstore rank " + config.rank() + ": " + readyFields);
        }
    }

    private static long ms(long nanos) {
        return nanos / 1_000_000;
    }

    String readyFields() {
        return readyFields;
    }

    /**
     * The orderly end of a job: waits until every rank is done (its readers may still fetch from us), then
     * closes. A dead peer ends the wait at once (niodev fails every pending receive); a live but idle one is
     * waited for up to {@link #FINISH_TIMEOUT}.
     */
    void finish() {
        if (world != null && toClose.size() > 0) {
            try {
                if (puller != null) {
                    // before the barrier: its chunks in flight need the peers still serving
                    puller.close();
                }
                world.barrier(FINISH_TIMEOUT);
            } catch (IOException e) {
                System.err.println("fanstore rank " + config.rank() + ": not every rank finished cleanly: "
                        + e.getMessage());
            }
        }
        close();
    }

    @Override
    public void close() {
        for (AutoCloseable c : toClose) {
            try {
                c.close();
            } catch (Exception e) {
                System.err.println("fanstore rank " + config.rank() + ": while stopping: " + e.getMessage());
            }
        }
        toClose.clear();
        if (world != null) {
            world.finalizeWorld(Duration.ofSeconds(5));
            world = null;
        }
    }

    /** Load progress: a bar on a terminal (rank 0 only, chosen by the launcher), nothing otherwise. */
    private static final class Progress implements LongConsumer, AutoCloseable {
        private final ProgressBar bar;

        private Progress(ProgressBar bar) {
            this.bar = bar;
        }

        static Progress of(boolean show, long totalBytes) {
            if (!show) {
                return new Progress(null);
            }
            return new Progress(new ProgressBarBuilder().setTaskName("loading").setInitialMax(totalBytes)
                    .setUnit(" MiB", 1 << 20).showSpeed().setStyle(ProgressBarStyle.ASCII).build());
        }

        @Override
        public void accept(long bytes) {
            if (bar != null) {
                bar.stepBy(bytes);
            }
        }

        @Override
        public void close() {
            if (bar != null) {
                bar.close();
            }
        }
    }
}
