package org.fanstore.runtime.stats;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ObjLongConsumer;

/**
 * One rank's I/O statistics: counters the open path, the fetch service and the shim add to (LongAdder and
 * atomic buckets: no lock on any hot path), and gauges read from the cache, the prefetcher and the shim's
 * counters file when a snapshot is taken. A snapshot is one line of {@code key=value} fields (README.md in this
 * folder lists them), sent to the launcher at job end and turned into JSON there.
 */
public final class RankStats {
    private static final OpenKind[] KINDS = OpenKind.values();

    private final int rank;
    private final LongAdder[] opens = new LongAdder[KINDS.length];
    private final LatencyHistogram[] latency = new LatencyHistogram[KINDS.length];
    private static final RemoteStage[] STAGES = RemoteStage.values();
    private final LatencyHistogram[] stages = new LatencyHistogram[STAGES.length];
    /** As holder: peers' reader requests, queue (receive to worker) and worker start to first message sent. */
    private final LatencyHistogram serveQueue = new LatencyHistogram();
    private final LatencyHistogram serveFirst = new LatencyHistogram();
    private final LongAdder errors = new LongAdder();
    private final LongAdder onDispatcher = new LongAdder();
    private final LongAdder waitNanos = new LongAdder();
    private final LongAdder opened = new LongAdder();
    private final LongAdder localRead = new LongAdder();
    private final LongAdder fetched = new LongAdder();
    private final LongAdder served = new LongAdder();
    private volatile Gauges cache;
    private volatile ShimCounters shim;
    private volatile Gauges fill;
    private volatile Gauges home;
    /** When the rank started ({@link System#nanoTime()}) and when an open was first answered with a file (0: none). */
    private volatile long startedAt = System.nanoTime();
    private final AtomicLong firstOpenAt = new AtomicLong();
    private volatile String loadFields = "";
    /** " lost_ranks=R[,R] lost_at_ms=T" once this rank left the world after a node was lost, else "". */
    private volatile String lostFields = "";

    public RankStats(int rank) {
        this.rank = rank;
        for (int i = 0; i < KINDS.length; i++) {
            opens[i] = new LongAdder();
            latency[i] = new LatencyHistogram();
        }
        for (int i = 0; i < STAGES.length; i++) {
            stages[i] = new LatencyHistogram();
        }
    }

    public int rank() {
        return rank;
    }

    /** Fields read when a snapshot is taken (the cache's, the fill's): each {@code key=value} told to {@code field}. */
    public interface Gauges {
        void report(ObjLongConsumer<String> field);
    }

    /** Times this rank's answers to peers' reader requests (the holder's share of their time to first byte). */
    public ServeTimes serveTimes() {
        return (queued, firstSent) -> {
            serveQueue.record(queued);
            serveFirst.record(firstSent);
        };
    }

    public void attach(Gauges materialized, ShimCounters counters) {
        this.cache = materialized;
        this.shim = counters;
    }

    /** The fill's counters go into the line; {@code started}: the rank's start, for the time to first byte. */
    public void attach(Gauges partitionFill, long started) {
        this.fill = partitionFill;
        this.startedAt = started;
    }

    /** The dataset home's counters (runtime/home: the object store's bytes and requests) go into the line. */
    public void attachHome(Gauges datasetHome) {
        this.home = datasetHome;
    }

    /** The load phases, as the runtime's READY fields ({@code load_ms=.. table_ms=..}); copied into snapshots. */
    public void loaded(String readyFields) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, String> f : fields(readyFields).entrySet()) {
            if (f.getKey().endsWith("_ms")) {
                sb.append(' ').append(f.getKey()).append('=').append(f.getValue());
            }
        }
        loadFields = sb.toString();
    }

    public void opened(OpenKind kind, long bytes, long fileSize, long nanos) {
        if (firstOpenAt.get() == 0) {
            firstOpenAt.compareAndSet(0, System.nanoTime());
        }
        opens[kind.ordinal()].increment();
        opened.add(fileSize);
        latency[kind.ordinal()].record(nanos);
        waitNanos.add(nanos);
        if (kind == OpenKind.REMOTE) {
            fetched.add(bytes);
        } else {
            localRead.add(bytes);
        }
    }

    /** One remote open's time per {@link RemoteStage}, indexed by ordinal; a negative one was not measured. */
    public void remoteStages(long[] nanos) {
        for (int i = 0; i < STAGES.length; i++) {
            if (nanos[i] >= 0) {
                stages[i].record(nanos[i]);
            }
        }
    }

    /** A remote open (a rider whose ranges had landed) answered on the dispatcher thread, no hand-off (open/README). */
    public void answeredOnDispatcher() {
        onDispatcher.increment();
    }

    public void failed(long nanos) {
        errors.increment();
        waitNanos.add(nanos);
    }

    public void served(long bytes) {
        served.add(bytes);
    }

    public long opens(OpenKind kind) {
        return opens[kind.ordinal()].sum();
    }

    public long shimCounter(int counter) {
        ShimCounters s = shim;
        return s == null ? 0 : s.value(counter);
    }

    /** The sizes of the files readers opened, directly or through the runtime. */
    public long bytesToReaders() {
        return shimCounter(ShimCountersDescriptor.LOCAL_BYTES) + shimCounter(ShimCountersDescriptor.CACHE_BYTES)
                + opened.sum();
    }

    /** The runtime-answered opens' latencies, all kinds together. */
    public long[] allLatencies() {
        long[] all = new long[LatencyHistogram.BUCKETS];
        for (LatencyHistogram h : latency) {
            long[] one = h.snapshot();
            for (int i = 0; i < all.length; i++) {
                all[i] += one[i];
            }
        }
        return all;
    }

    /** The snapshot line: {@code rank=R key=value...} (field names: README.md). */
    /**
     * A node was lost ({@code ranks}, noticed at {@code atMillis}, epoch ms): named in this rank's line, as
     * {@code lost_ranks} and {@code lost_at_ms} (docs/stats.md).
     */
    public void lost(int[] ranks, long atMillis) {
        StringBuilder sb = new StringBuilder(" lost_ranks=");
        for (int i = 0; i < ranks.length; i++) {
            sb.append(i > 0 ? "," : "").append(ranks[i]);
        }
        lostFields = sb.append(" lost_at_ms=").append(atMillis).toString();
    }

    public String line() {
        StringBuilder sb = new StringBuilder("rank=").append(rank);
        ShimCounters s = shim;
        put(sb, "shim_counters", s != null ? 1 : 0);
        put(sb, "opens_local_direct", shimCounter(ShimCountersDescriptor.LOCAL_OPENS));
        put(sb, "opens_cache_hit_direct", shimCounter(ShimCountersDescriptor.CACHE_OPENS));
        for (OpenKind k : KINDS) {
            put(sb, "opens_" + k.key(), opens(k));
        }
        put(sb, "open_errors", errors.sum());
        put(sb, "opens_remote_on_dispatcher", onDispatcher.sum());
        put(sb, "bytes_local_direct", shimCounter(ShimCountersDescriptor.LOCAL_BYTES));
        put(sb, "bytes_cache_hit_direct", shimCounter(ShimCountersDescriptor.CACHE_BYTES));
        put(sb, "bytes_opened_via_runtime", opened.sum());
        put(sb, "bytes_local_read", localRead.sum());
        put(sb, "bytes_fetched", fetched.sum());
        put(sb, "bytes_served", served.sum());
        put(sb, "runtime_wait_us", waitNanos.sum() / 1000);
        put(sb, "shim_wake_ns", shimCounter(ShimCountersDescriptor.WAKE_NANOS));
        put(sb, "shim_wakes", shimCounter(ShimCountersDescriptor.WAKES));
        long first = firstOpenAt.get();
        put(sb, "first_byte_ms", first == 0 ? -1 : (first - startedAt) / 1_000_000);
        put(sb, "bytes_from_local", localRead.sum() + shimCounter(ShimCountersDescriptor.LOCAL_BYTES));
        for (Gauges g : new Gauges[] {fill, home, cache}) {
            if (g != null) {
                g.report((key, value) -> put(sb, key, value));
            }
        }
        sb.append(loadFields).append(lostFields);
        for (int i = 0; i < KINDS.length; i++) {
            String h = latency[i].encode();
            if (!h.isEmpty()) {
                sb.append(" latency_").append(KINDS[i].key()).append('=').append(h);
            }
        }
        for (int i = 0; i < STAGES.length; i++) {
            String h = stages[i].encode();
            if (!h.isEmpty()) {
                sb.append(" stage_").append(STAGES[i].key()).append('=').append(h);
            }
        }
        for (String[] h : new String[][] {{"serve_queue", serveQueue.encode()}, {"serve_first", serveFirst.encode()}}) {
            if (!h[1].isEmpty()) {
                sb.append(' ').append(h[0]).append('=').append(h[1]);
            }
        }
        return sb.toString();
    }

    private static void put(StringBuilder sb, String key, long value) {
        sb.append(' ').append(key).append('=').append(value);
    }

    /** The fields of a {@code key=value ...} line, in order; a field without '=' is skipped. */
    public static Map<String, String> fields(String line) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String field : line.trim().split("\\s+")) {
            int eq = field.indexOf('=');
            if (eq > 0) {
                out.put(field.substring(0, eq), field.substring(eq + 1));
            }
        }
        return out;
    }
}
