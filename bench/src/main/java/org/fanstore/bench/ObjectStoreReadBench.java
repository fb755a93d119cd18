package org.fanstore.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.fanstore.prep.format.DiscardChannel;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;
import org.fanstore.prep.store.StoreCounters;

/**
 * The raw store's ceiling for a dataset in a bucket: its partition objects ({@code *.fsp}) read once with N parallel
 * range GETs by fanstore's own S3 client ({@link ObjectStore}, the AWS SDK for Java 2.x), the bytes discarded.
 * Modes: {@code threads} (default) splits every partition into PART_MIB ranges and has N threads issue
 * {@link ObjectStore#read} for them (N GETs in flight throughout); {@code parallel} reads the partitions one after
 * another with {@link ObjectStore#readParallel} (its fixed pool, as the runtime's ObjectStoreSource does). Endpoint
 * and keys from the AWS_* environment. Prints one line:
 * {@code raw-store MODE N objects O bytes B seconds S MiB/s R requests Q} (seconds from the first range GET to the last
 * byte, after the LIST and a one-byte GET to warm the client up: a ceiling).
 * Usage: {@code ObjectStoreReadBench s3://BUCKET/PREFIX/NAME.fs [N] [PART_MIB] [threads|parallel]};
 * see bench/object-store.sh.
 */
public final class ObjectStoreReadBench {
    private ObjectStoreReadBench() {
    }

    private record Range(String key, long position, long length) {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: ObjectStoreReadBench s3://BUCKET/PREFIX/NAME.fs [N] [PART_MIB]"
                    + " [threads|parallel]");
            System.exit(2);
        }
        DatasetLocation at = DatasetLocation.dataset(args[0]);
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        long part = (args.length > 2 ? Long.parseLong(args[2]) : 8) << 20;
        String mode = args.length > 3 ? args[3] : "threads";
        DiscardChannel sink = DiscardChannel.INSTANCE;
        long start;
        long bytes = 0;
        int objects = 0;
        StoreCounters counters;
        try (ObjectStore store = ObjectStore.fromEnvironment()) {
            counters = store.counters();
            List<Range> ranges = new ArrayList<>();
            for (ObjectStore.ObjectInfo o : store.list(at.bucket(), at.objectKey(""))) {
                if (!o.key().endsWith(".fsp")) {
                    continue;
                }
                objects++;
                bytes += o.size();
                if (mode.equals("parallel")) {
                    ranges.add(new Range(o.key(), 0, o.size()));
                    continue;
                }
                for (long off = 0; off < o.size(); off += part) {
                    ranges.add(new Range(o.key(), off, Math.min(part, o.size() - off)));
                }
            }
            if (!ranges.isEmpty()) { // the SDK's first GET loads and sets up much: a ceiling is measured warm
                store.read(at.bucket(), ranges.get(0).key(), 0, 1, sink);
            }
            start = System.nanoTime();
            if (mode.equals("parallel")) {
                for (Range r : ranges) {
                    store.readParallel(at.bucket(), r.key(), r.position(), r.length(), sink);
                }
            } else {
                AtomicInteger next = new AtomicInteger();
                ExecutorService pool = Executors.newFixedThreadPool(n);
                List<Future<Void>> done = new ArrayList<>();
                for (int t = 0; t < n; t++) {
                    done.add(pool.submit(() -> {
                        for (int i = next.getAndIncrement(); i < ranges.size(); i = next.getAndIncrement()) {
                            Range r = ranges.get(i);
                            store.read(at.bucket(), r.key(), r.position(), r.length(), sink);
                        }
                        return null;
                    }));
                }
                for (Future<Void> f : done) {
                    f.get();
                }
                pool.shutdown();
                pool.awaitTermination(1, TimeUnit.MINUTES);
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("raw-store %s %d objects %d bytes %d seconds %.3f MiB/s %.1f requests %d%n", mode, n, objects,
                bytes, seconds, bytes / seconds / (1 << 20), counters.requests());
    }
}
