package org.fanstore.runtime;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * What the launcher tells one runtime rank, as {@code --key=value} arguments. The runtime is started only by
 * the launcher, so this stays a flat, strict parser: an unknown or missing key is a launcher bug and says so.
 */
public record RuntimeConfig(int rank, int size, String rendezvousHost, int rendezvousPort, Path data, Path localDir,
                            Path shmDir, long cacheMb, int replicas, String jobId, String unpack, boolean progress,
                            String localCapacity, boolean prefetch) {

    /** When local uncompressed files are unpacked: before ready, after it, or only when first opened. */
    public static final java.util.List<String> UNPACK_MODES = java.util.List.of("eager", "background", "lazy");

    public static RuntimeConfig parse(String[] args) {
        Map<String, String> kv = new HashMap<>();
        boolean progress = false;
        for (String a : args) {
            if (a.equals("--progress")) {
                progress = true;
                continue;
            }
            int eq = a.indexOf('=');
            if (!a.startsWith("--") || eq < 0) {
                throw new IllegalArgumentException("runtime argument '" + a + "' is not --key=value");
            }
            kv.put(a.substring(2, eq), a.substring(eq + 1));
        }
        String rv = need(kv, "rendezvous");
        int colon = rv.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("--rendezvous must be HOST:PORT, got " + rv);
        }
        RuntimeConfig c = new RuntimeConfig(Integer.parseInt(need(kv, "rank")), Integer.parseInt(need(kv, "size")),
                rv.substring(0, colon), Integer.parseInt(rv.substring(colon + 1)), Path.of(need(kv, "data")),
                Path.of(need(kv, "local-dir")), Path.of(need(kv, "shm-dir")), Long.parseLong(need(kv, "cache-mb")),
                Integer.parseInt(kv.getOrDefault("replicas", "0")), need(kv, "job-id"),
                kv.getOrDefault("unpack", "background"), progress, kv.getOrDefault("local-capacity", "auto"),
                !"off".equals(kv.getOrDefault("prefetch", "on")));
        org.fanstore.runtime.placement.LocalCapacity.parse(c.localCapacity());
        if (!java.util.List.of("on", "off").contains(kv.getOrDefault("prefetch", "on"))) {
            throw new IllegalArgumentException("--prefetch must be on or off, got " + kv.get("prefetch"));
        }
        if (!UNPACK_MODES.contains(c.unpack())) {
            throw new IllegalArgumentException("--unpack must be one of " + UNPACK_MODES + ", got " + c.unpack());
        }
        kv.keySet().removeAll(java.util.List.of("rank", "size", "rendezvous", "data", "local-dir", "shm-dir",
                "cache-mb", "replicas", "job-id", "unpack", "local-capacity", "prefetch"));
        if (!kv.isEmpty()) {
            throw new IllegalArgumentException("unknown runtime arguments " + kv.keySet());
        }
        return c;
    }

    private static String need(Map<String, String> kv, String key) {
        String v = kv.get(key);
        if (v == null) {
            throw new IllegalArgumentException("runtime argument --" + key + " is missing");
        }
        return v;
    }
}
