package org.fanstore.launcher.run;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The one line `fanstore run` prints when the job is ready, built from the runtimes' READY lines
 * ({@code files=.. dirs=.. bytes=.. load_ms=.. meta_bytes=.. entries=..}; unknown keys are ignored so old and
 * new runtimes can meet). Namespace numbers are the same on every rank; load time is the slowest rank's.
 */
final class ReadyLine {
    private ReadyLine() {
    }

    static Map<String, Long> parse(String line) {
        Map<String, Long> out = new HashMap<>();
        for (String field : line.trim().split("\\s+")) {
            int eq = field.indexOf('=');
            if (eq > 0) {
                try {
                    out.put(field.substring(0, eq), Long.parseLong(field.substring(eq + 1)));
                } catch (NumberFormatException ignored) {
                    // Not a number: not one of ours.
                }
            }
        }
        return out;
    }

    static String summarize(Map<Integer, String> readyByRank, int worldSize, double wallSeconds) {
        return summarize(readyByRank, worldSize, wallSeconds, "the shared FS");
    }

    /** As above; {@code home} names where the dataset lives ("the shared FS", "the object store"). */
    static String summarize(Map<Integer, String> readyByRank, int worldSize, double wallSeconds, String home) {
        Map<String, Long> first = parse(readyByRank.values().iterator().next());
        long slowestLoadMs = 0;
        for (String line : readyByRank.values()) {
            slowestLoadMs = Math.max(slowestLoadMs, parse(line).getOrDefault("load_ms", 0L));
        }
        long files = first.getOrDefault("files", 0L);
        long entries = Math.max(1, first.getOrDefault("entries", files));
        long metaBytes = first.getOrDefault("meta_bytes", 0L);
        long local = Long.MAX_VALUE;
        long peers = 0;
        long shared = 0;
        for (String line : readyByRank.values()) {
            Map<String, Long> f = parse(line);
            local = Math.min(local, f.getOrDefault("local_bytes", 0L));
            peers = Math.max(peers, f.getOrDefault("peer_bytes", 0L));
            shared = Math.max(shared, f.getOrDefault("sharedfs_bytes", 0L));
        }
        return String.format(Locale.ROOT,
                "fanstore: ready: %d ranks, %d files, %s, loaded in %.1f s (%.1f s wall), %d B/file of metadata;"
                        + " each node keeps %s locally (filling now), reads %s from peers and %s from %s",
                worldSize, files, human(first.getOrDefault("bytes", 0L)), slowestLoadMs / 1000.0, wallSeconds,
                metaBytes / entries, local == Long.MAX_VALUE ? "0 B" : human(local), human(peers), human(shared), home);
    }

    static String human(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? bytes + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
