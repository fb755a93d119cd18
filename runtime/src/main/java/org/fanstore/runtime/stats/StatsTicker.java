package org.fanstore.runtime.stats;

import java.util.Locale;
import java.util.Map;

/**
 * {@code FANSTORE_STATS_INTERVAL=SECONDS}: one compact line per interval on stderr, what a user watching a
 * training job wants to see move (opens so far, how many local and remote, read throughput over the interval,
 * p99 open latency through the runtime so far). A daemon thread; nothing runs when the variable is unset.
 */
public final class StatsTicker implements AutoCloseable {
    public static final String VARIABLE = "FANSTORE_STATS_INTERVAL";

    private final RankStats stats;
    private final long intervalMillis;
    private final Thread thread;
    private volatile boolean stopped;

    private StatsTicker(RankStats stats, long intervalMillis) {
        this.stats = stats;
        this.intervalMillis = intervalMillis;
        this.thread = new Thread(this::run, "fanstore-stats");
        this.thread.setDaemon(true);
    }

    /** A running ticker when the environment asks for one, else null. */
    public static StatsTicker fromEnvironment(Map<String, String> env, RankStats stats) {
        long millis = intervalMillis(env);
        if (millis == 0) {
            return null;
        }
        StatsTicker t = new StatsTicker(stats, millis);
        t.thread.start();
        return t;
    }

    /**
     * The interval the environment asks for, 0 for none.
     *
     * @throws IllegalArgumentException for a value that is not a positive number of seconds
     */
    public static long intervalMillis(Map<String, String> env) {
        String value = env.get(VARIABLE);
        if (value == null || value.isBlank()) {
            return 0;
        }
        double seconds;
        try {
            seconds = Double.parseDouble(value.trim());
        } catch (NumberFormatException e) {
            seconds = -1;
        }
        if (!(seconds > 0) || seconds > 86_400) {
            throw new IllegalArgumentException(VARIABLE + " must be a number of seconds (0 < s <= 86400), got '"
                    + value + "'");
        }
        return Math.max(1, (long) (seconds * 1000));
    }

    private void run() {
        long lastBytes = stats.bytesToReaders();
        long last = System.nanoTime();
        while (!stopped) {
            try {
                Thread.sleep(intervalMillis);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            long bytes = stats.bytesToReaders();
            System.err.println(line(bytes - lastBytes, now - last));
            lastBytes = bytes;
            last = now;
        }
    }

    String line(long bytes, long nanos) {
        long local = stats.shimCounter(ShimCountersDescriptor.LOCAL_OPENS) + stats.opens(OpenKind.LOCAL)
                + stats.opens(OpenKind.DECOMPRESSED);
        long cache = stats.shimCounter(ShimCountersDescriptor.CACHE_OPENS) + stats.opens(OpenKind.CACHE_HIT);
        long remote = stats.opens(OpenKind.REMOTE);
        long all = local + cache + remote + stats.opens(OpenKind.OUTPUT);
        double mbps = nanos > 0 ? bytes / 1e6 / (nanos / 1e9) : 0;
        long p99 = LatencyHistogram.percentile(stats.allLatencies(), 0.99) / 1000;
        return String.format(Locale.ROOT, "fanstore rank %d: opens=%d local=%d cache=%d remote=%d MB/s=%.1f p99_us=%d",
                stats.rank(), all, local, cache, remote, mbps, p99);
    }

    @Override
    public void close() {
        stopped = true;
        thread.interrupt();
    }
}
