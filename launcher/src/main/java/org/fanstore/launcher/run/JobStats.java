package org.fanstore.launcher.run;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.fanstore.runtime.stats.LatencyHistogram;
import org.fanstore.runtime.stats.OpenKind;
import org.fanstore.runtime.stats.RankStats;
import org.fanstore.runtime.stats.RemoteStage;

/**
 * The job's I/O statistics as the launcher sees them at the end: the runtimes' {@code FANSTORE-STATS} lines
 * (rank 0's runtime relays every rank's), turned into the one-line summary every job prints and the JSON
 * document of {@code --stats FILE}. Field meanings: docs/stats.md; the schema is versioned by
 * {@link #SCHEMA_VERSION} (a change that renames or re-means a field bumps it; new fields do not).
 */
final class JobStats {
    static final int SCHEMA_VERSION = 2;

    private final SortedMap<Integer, Map<String, String>> ranks = new TreeMap<>();
    /** Ranks lost after ready, with when (epoch ms): --on-node-loss continue went on without them. */
    private Map<Integer, Long> lost = Map.of();
    /** How the summary names the dataset's home (the --data argument). */
    private String home = "the dataset's home";

    void home(String name) {
        this.home = name;
    }

    void lost(Map<Integer, Long> lostRanks) {
        this.lost = new TreeMap<>(lostRanks);
    }

    /** Adds the ranks of {@code lines} ({@code rank=R key=value...}); a rank seen twice keeps its first line. */
    void add(List<String> lines) {
        for (String line : lines) {
            Map<String, String> f = RankStats.fields(line);
            try {
                ranks.putIfAbsent(Integer.parseInt(f.getOrDefault("rank", "")), f);
            } catch (NumberFormatException ignored) {
                // not a stats line of ours
            }
        }
    }

    boolean isEmpty() {
        return ranks.isEmpty();
    }

    /** One line for the end of the job: opens and where they were served, bytes, p99, slowest load. */
    String summary(int worldSize) {
        Map<String, Object> t = totals();
        @SuppressWarnings("unchecked")
        Map<String, Long> opens = (Map<String, Long>) t.get("opens");
        @SuppressWarnings("unchecked")
        Map<String, Long> bytes = (Map<String, Long>) t.get("bytes");
        long all = opens.get("total");
        long local = opens.get("local") + opens.get("decompressed");
        long cache = opens.get("cache_hit");
        long remote = opens.get("remote");
        long read = bytes.get("local_direct_opened") + bytes.get("cache_hit_direct_opened")
                + bytes.get("opened_via_runtime");
        long[] viaRuntime = merged(null);
        String p99 = Arrays.stream(viaRuntime).sum() == 0 ? "no opens via runtime"
                : "p99 open via runtime " + LatencyHistogram.percentile(viaRuntime, 0.99) / 1000 + " us";
        String who = ranks.size() == worldSize ? worldSize + " ranks" : ranks.size() + " of " + worldSize + " ranks";
        @SuppressWarnings("unchecked")
        Map<String, Long> fill = (Map<String, Long>) t.get("fill");
        long first = (Long) t.get("first_byte_ms");
        return String.format(Locale.ROOT,
                "fanstore: %s, %d opens (%s local, %s cache hits, %s remote), %s opened, %s,"
                        + " load %.1f s, first byte %s; bytes from local %s, peers %s, shared FS %s%s; kept %s of %s"
                        + " planned", who, all, pct(local, all), pct(cache, all), pct(remote, all),
                ReadyLine.human(read), p99, maxOf("load_ms") / 1000.0,
                first < 0 ? "none" : String.format(Locale.ROOT, "%.2f s", first / 1000.0),
                ReadyLine.human(fill.get("bytes_from_local")), ReadyLine.human(fill.get("bytes_from_peer")),
                ReadyLine.human(fill.get("bytes_from_sharedfs")), objectStore(fill),
                ReadyLine.human(fill.get("bytes_local")),
                ReadyLine.human(fill.get("bytes_planned"))) + outageSummary(fill) + lostSummary();
    }

    /**
     * "; the object store of s3://B/P/NAME.fs stopped answering: 6 reads got EIO after the bound, 4 at once while it
     * was marked down (41 s)" when a rank saw its home go silent (runtime/fill/README.md, "A silent home").
     */
    private String outageSummary(Map<String, Long> fill) {
        long silent = fill.getOrDefault("home_silent_reads", 0L);
        if (fill.getOrDefault("home_outages", 0L) == 0) {
            return "";
        }
        String which = fill.containsKey("objectstore_requests") ? "the object store of " : "the shared FS of ";
        return String.format(Locale.ROOT, "; %s%s stopped answering: %d reads got no answer within the bound, %d"
                + " got EIO at once while it was marked down (%.0f s)", which, home, silent,
                fill.getOrDefault("home_refused_reads", 0L), maxOf("home_down_ms") / 1000.0);
    }

    /** "; lost rank 2 at 05:58:03 UTC: its share read from the dataset's home since" when a node was lost. */
    private String lostSummary() {
        if (lost.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        lost.forEach((rank, at) -> sb.append(sb.length() > 0 ? ", " : "").append("rank ").append(rank)
                .append(" at ").append(java.time.format.DateTimeFormatter.ofPattern("HH:mm:ss", Locale.ROOT)
                        .withZone(java.time.ZoneOffset.UTC).format(java.time.Instant.ofEpochMilli(at))).append(" UTC"));
        return "; lost " + sb + " (--on-node-loss continue): the others read its share from the dataset's home since";
    }

    /** ", object store B in N requests" when the job read from one, else nothing. */
    private static String objectStore(Map<String, Long> fill) {
        long bytes = fill.getOrDefault("bytes_from_objectstore", 0L);
        long requests = fill.getOrDefault("objectstore_requests", 0L);
        return bytes == 0 && requests == 0 ? "" : ", object store " + ReadyLine.human(bytes) + " in " + requests
                + " requests";
    }

    /** The earliest first byte of any rank (ms from its start), or -1 when no rank answered an open. */
    private long firstByte() {
        long first = -1;
        for (Map<String, String> f : ranks.values()) {
            long v = num(f, "first_byte_ms");
            if (v >= 0 && (first < 0 || v < first)) {
                first = v;
            }
        }
        return first;
    }

    /** Writes the JSON document to {@code file} (atomically: a reader never sees half of it). */
    void write(Path file, String jobId, String dataset, int worldSize, double wallSeconds, int exitStatus,
               List<String> command) throws IOException {
        Map<String, Object> job = new LinkedHashMap<>();
        job.put("id", jobId);
        job.put("dataset", dataset);
        job.put("ranks", worldSize);
        job.put("ranks_reported", ranks.size());
        job.put("wall_s", wallSeconds);
        job.put("exit_status", exitStatus);
        job.put("command", command);
        List<Object> lostList = new ArrayList<>();
        lost.forEach((rank, at) -> lostList.add(new LinkedHashMap<>(Map.of("rank", (long) rank, "at_ms", at))));
        job.put("lost", lostList);
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("schema", "fanstore-stats");
        doc.put("schema_version", SCHEMA_VERSION);
        doc.put("job", job);
        List<Object> perRank = new ArrayList<>();
        for (Map<String, String> f : ranks.values()) {
            perRank.add(rankObject(f));
        }
        doc.put("ranks", perRank);
        doc.put("totals", totals());
        Path abs = file.toAbsolutePath();
        Path tmp = abs.resolveSibling(abs.getFileName() + ".tmp");
        Files.writeString(tmp, Json.write(doc), StandardCharsets.UTF_8);
        Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static Map<String, Object> rankObject(Map<String, String> f) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("rank", num(f, "rank"));
        r.put("shim_counters", num(f, "shim_counters") == 1);
        r.put("opens", opens(f));
        r.put("bytes", bytes(f));
        r.put("first_byte_ms", num(f, "first_byte_ms"));
        r.put("fill", fill(f));
        Map<String, Object> latency = new LinkedHashMap<>();
        for (OpenKind k : OpenKind.values()) {
            latency.put(k.key(), latency(histogram(f, k)));
        }
        r.put("open_latency_us", latency);
        r.put("remote_open_stages_us", stages(List.of(f)));
        r.put("runtime_wait_ms", num(f, "runtime_wait_us") / 1000);
        r.put("cache", cache(f));
        Map<String, Object> load = new LinkedHashMap<>();
        for (String phase : new String[] {"load", "init", "table", "unpack", "serve"}) {
            load.put(phase, num(f, phase + "_ms"));
        }
        r.put("load_ms", load);
        return r;
    }

    private static Map<String, Long> opens(Map<String, String> f) {
        long localDirect = num(f, "opens_local_direct");
        long cacheDirect = num(f, "opens_cache_hit_direct");
        Map<String, Long> o = new LinkedHashMap<>();
        o.put("total", localDirect + cacheDirect + num(f, "opens_local") + num(f, "opens_cache_hit")
                + num(f, "opens_decompressed") + num(f, "opens_remote") + num(f, "opens_output"));
        o.put("local", localDirect + num(f, "opens_local"));
        o.put("local_direct", localDirect);
        o.put("local_via_runtime", num(f, "opens_local"));
        o.put("cache_hit", cacheDirect + num(f, "opens_cache_hit"));
        o.put("cache_hit_direct", cacheDirect);
        o.put("cache_hit_via_runtime", num(f, "opens_cache_hit"));
        o.put("decompressed", num(f, "opens_decompressed"));
        o.put("remote", num(f, "opens_remote"));
        o.put("remote_on_dispatcher", num(f, "opens_remote_on_dispatcher"));
        o.put("output", num(f, "opens_output"));
        o.put("errors", num(f, "open_errors"));
        return o;
    }

    private static Map<String, Long> bytes(Map<String, String> f) {
        Map<String, Long> b = new LinkedHashMap<>();
        b.put("local_direct_opened", num(f, "bytes_local_direct"));
        b.put("cache_hit_direct_opened", num(f, "bytes_cache_hit_direct"));
        b.put("opened_via_runtime", num(f, "bytes_opened_via_runtime"));
        b.put("local_read_by_runtime", num(f, "bytes_local_read"));
        b.put("fetched", num(f, "bytes_fetched"));
        b.put("served", num(f, "bytes_served"));
        return b;
    }

    /** Where the bytes came from, how far the fill got, and what the governor decided (runtime/fill). */
    private static Map<String, Long> fill(Map<String, String> f) {
        Map<String, Long> p = new LinkedHashMap<>();
        for (String k : new String[] {"bytes_from_local", "bytes_from_peer", "bytes_from_sharedfs"}) {
            p.put(k, num(f, k));
        }
        // a dataset in a bucket (runtime/home): present when non-zero
        for (String k : new String[] {"bytes_from_objectstore", "objectstore_requests", "home_outages",
            "home_silent_reads", "home_refused_reads", "home_down_ms"}) {
            if (num(f, k) != 0) {
                p.put(k, num(f, k));
            }
        }
        for (String k : new String[] {"partitions_planned", "partitions_local", "bytes_planned", "bytes_local",
                "ms"}) {
            p.put(k, num(f, "fill_" + k));
        }
        for (String k : new String[] {"background_starts", "background_held", "foreground_starts",
                "foreground_held"}) {
            p.put("governor_" + k, num(f, "governor_" + k));
        }
        return p;
    }

    private static Map<String, Long> cache(Map<String, String> f) {
        Map<String, Long> c = new LinkedHashMap<>();
        for (String k : new String[] {"bytes", "files", "capacity_bytes", "evictions", "pins", "pins_expired",
            "streamed"}) {
            c.put(k, num(f, "cache_" + k));
        }
        return c;
    }

    /** Per {@link RemoteStage}: count, p50, p99 and mean over the remote opens of {@code perRank}. */
    private static Map<String, Object> stages(Collection<Map<String, String>> perRank) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (RemoteStage s : RemoteStage.values()) {
            long[] b = new long[LatencyHistogram.BUCKETS];
            for (Map<String, String> f : perRank) {
                LatencyHistogram.decodeInto(f.get("stage_" + s.key()), b);
            }
            out.put(s.key(), withMean(b));
        }
        // the holder's side of peers' reader fetches (its share of their fetch_first_byte)
        for (String h : new String[] {"serve_queue", "serve_first"}) {
            long[] b = new long[LatencyHistogram.BUCKETS];
            for (Map<String, String> f : perRank) {
                LatencyHistogram.decodeInto(f.get(h), b);
            }
            out.put("holder_" + h, withMean(b));
        }
        // the shim's wake-up after an answer: a sum and a count over ALL runtime answers (no per-open histogram)
        long wakeNanos = 0;
        long wakes = 0;
        for (Map<String, String> f : perRank) {
            wakeNanos += num(f, "shim_wake_ns");
            wakes += num(f, "shim_wakes");
        }
        Map<String, Object> wake = new LinkedHashMap<>();
        wake.put("count", wakes);
        wake.put("mean", wakes > 0 ? wakeNanos / wakes / 1000 : 0);
        out.put("shim_wake", wake);
        return out;
    }

    private static Map<String, Object> withMean(long[] b) {
        Map<String, Object> l = latency(b);
        l.put("mean", LatencyHistogram.mean(b) / 1000);
        return l;
    }

    private static Map<String, Object> latency(long[] buckets) {
        long count = 0;
        for (long c : buckets) {
            count += c;
        }
        Map<String, Object> l = new LinkedHashMap<>();
        l.put("count", count);
        l.put("p50", LatencyHistogram.percentile(buckets, 0.5) / 1000);
        l.put("p99", LatencyHistogram.percentile(buckets, 0.99) / 1000);
        return l;
    }

    /** Sums over ranks; load phases are the slowest rank's; latency percentiles of the merged buckets. */
    private Map<String, Object> totals() {
        Map<String, Object> t = new LinkedHashMap<>();
        List<Map<String, Long>> o = new ArrayList<>();
        List<Map<String, Long>> b = new ArrayList<>();
        List<Map<String, Long>> p = new ArrayList<>();
        List<Map<String, Long>> c = new ArrayList<>();
        long wait = 0;
        for (Map<String, String> f : ranks.values()) {
            o.add(opens(f));
            b.add(bytes(f));
            p.add(fill(f));
            c.add(cache(f));
            wait += num(f, "runtime_wait_us");
        }
        t.put("opens", sum(o, opens(Map.of())));
        t.put("bytes", sum(b, bytes(Map.of())));
        Map<String, Long> filled = sum(p, fill(Map.of()));
        filled.put("ms", maxOf("fill_ms"));
        t.put("fill", filled);
        t.put("first_byte_ms", firstByte());
        Map<String, Object> latency = new LinkedHashMap<>();
        for (OpenKind k : OpenKind.values()) {
            latency.put(k.key(), latency(merged(k)));
        }
        latency.put("all", latency(merged(null)));
        t.put("open_latency_us", latency);
        t.put("remote_open_stages_us", stages(ranks.values()));
        t.put("runtime_wait_ms", wait / 1000);
        t.put("cache", sum(c, cache(Map.of())));
        Map<String, Object> load = new LinkedHashMap<>();
        load.put("slowest_rank_load", maxOf("load_ms"));
        t.put("load_ms", load);
        return t;
    }

    private static Map<String, Long> sum(List<Map<String, Long>> parts, Map<String, Long> zero) {
        Map<String, Long> out = new LinkedHashMap<>(zero);
        for (Map<String, Long> part : parts) {
            part.forEach((k, v) -> out.merge(k, v, Long::sum));
        }
        return out;
    }

    /** The buckets of one kind (or of all kinds for null) over every rank. */
    private long[] merged(OpenKind kind) {
        long[] all = new long[LatencyHistogram.BUCKETS];
        for (Map<String, String> f : ranks.values()) {
            for (OpenKind k : OpenKind.values()) {
                if (kind == null || k == kind) {
                    LatencyHistogram.decodeInto(f.get("latency_" + k.key()), all);
                }
            }
        }
        return all;
    }

    private static long[] histogram(Map<String, String> f, OpenKind k) {
        long[] b = new long[LatencyHistogram.BUCKETS];
        LatencyHistogram.decodeInto(f.get("latency_" + k.key()), b);
        return b;
    }

    private long maxOf(String key) {
        long max = 0;
        for (Map<String, String> f : ranks.values()) {
            max = Math.max(max, num(f, key));
        }
        return max;
    }

    private static long num(Map<String, String> f, String key) {
        try {
            return Long.parseLong(f.getOrDefault(key, "0"));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static String pct(long part, long whole) {
        return whole == 0 ? "0%" : Math.round(100.0 * part / whole) + "%";
    }
}
