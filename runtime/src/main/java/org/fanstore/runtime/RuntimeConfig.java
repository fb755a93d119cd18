package org.fanstore.runtime;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * What the launcher tells one runtime rank, as {@code --key=value} arguments (and bare {@code --flag}s): the
 * launcher builds a config and passes {@link #toArgs()}, the runtime {@link #parse}s them back. The keys are
 * declared once, in {@link Key}. The runtime is started only by the launcher, so parsing is strict: an
 * unknown, repeated or missing key is a launcher bug (or a launcher and runtime from different builds) and
 * says so.
 */
public record RuntimeConfig(int rank, int size, String rendezvousHost, int rendezvousPort, String data, Path localDir,
                            Path shmDir, long cacheMb, int replicas, String jobId, Unpack unpack, boolean verbose,
                            String localCapacity, boolean prefetch, Path outputDir,
                            Path secretFile, TableLoad tableLoad, OnNodeLoss onNodeLoss) {

    /** What a node lost after ready does to the others (liveness/README.md, "A node lost after ready"). */
    public enum OnNodeLoss {
        CONTINUE, END;

        public String argument() {
            return argumentOf(this);
        }

        /** The choice named {@code s}; the message names the option and the choices. */
        public static OnNodeLoss of(String s) {
            return choice(OnNodeLoss.class, "--on-node-loss", s);
        }
    }

    /** How the metadata table reaches each node: rank 0 reads it and broadcasts it, or every rank reads it. */
    public enum TableLoad {
        BROADCAST, READ;

        public String argument() {
            return argumentOf(this);
        }

        /** The choice named {@code s}; the message names the option and the choices. */
        public static TableLoad of(String s) {
            return choice(TableLoad.class, "--table-load", s);
        }
    }

    /** When local uncompressed files are unpacked: before ready, after it, or only when first opened. */
    public enum Unpack {
        EAGER, BACKGROUND, LAZY;

        /** As written on command lines. */
        public String argument() {
            return argumentOf(this);
        }

        /** The mode named {@code s}; the message names the option and the choices. */
        public static Unpack of(String s) {
            return choice(Unpack.class, "--unpack", s);
        }
    }

    /** A choice as written on command lines: its name in lower case. */
    private static String argumentOf(Enum<?> choice) {
        return choice.name().toLowerCase(Locale.ROOT);
    }

    /** The constant of {@code type} written {@code s}; the message names the option and the choices. */
    private static <E extends Enum<E>> E choice(Class<E> type, String option, String s) {
        for (E e : type.getEnumConstants()) {
            if (argumentOf(e).equals(s)) {
                return e;
            }
        }
        throw new IllegalArgumentException(option + " must be one of " + Arrays.stream(type.getEnumConstants())
                .map(RuntimeConfig::argumentOf).toList() + ", got " + s);
    }

    /** FANSTORE_VERBOSE=1: per-rank load phases and background unpacking on stderr. */
    public static boolean verboseFrom(Map<String, String> env) {
        return "1".equals(env.get("FANSTORE_VERBOSE"));
    }

    /** Every argument, in the order toArgs writes them. A flag is present (true) or absent; the rest are required. */
    private enum Key {
        RANK("rank", c -> Integer.toString(c.rank())),
        SIZE("size", c -> Integer.toString(c.size())),
        RENDEZVOUS("rendezvous", c -> c.rendezvousHost() + ":" + c.rendezvousPort()),
        /** The dataset: an absolute path or s3://BUCKET/PREFIX/NAME.fs (its credentials: the environment only). */
        DATA("data", RuntimeConfig::data),
        LOCAL_DIR("local-dir", c -> c.localDir().toString()),
        SHM_DIR("shm-dir", c -> c.shmDir().toString()),
        CACHE_MB("cache-mb", c -> Long.toString(c.cacheMb())),
        REPLICAS("replicas", c -> Integer.toString(c.replicas())),
        JOB_ID("job-id", RuntimeConfig::jobId),
        UNPACK("unpack", c -> c.unpack().argument()),
        VERBOSE("verbose", c -> c.verbose() ? "" : null, true),
        LOCAL_CAPACITY("local-capacity", RuntimeConfig::localCapacity),
        PREFETCH("prefetch", c -> c.prefetch() ? "on" : "off"),
        /** Optional: absent when the job's outputs are discarded. */
        OUTPUT_DIR("output-dir", c -> c.outputDir() == null ? null : c.outputDir().toString()),
        /** A file (0600) holding the job secret: the secret itself would be readable in /proc/PID/cmdline. */
        SECRET_FILE("secret-file", c -> c.secretFile().toString()),
        TABLE_LOAD("table-load", c -> c.tableLoad().argument()),
        ON_NODE_LOSS("on-node-loss", c -> c.onNodeLoss().argument());

        final String option;
        /** The value to write for a config; for a flag "" when set, null when not; null for an optional key
         * leaves it out. */
        final Function<RuntimeConfig, String> value;
        final boolean flag;

        Key(String option, Function<RuntimeConfig, String> value) {
            this(option, value, false);
        }

        Key(String option, Function<RuntimeConfig, String> value, boolean flag) {
            this.option = "--" + option;
            this.value = value;
            this.flag = flag;
        }

        static Key of(String option) {
            for (Key k : values()) {
                if (k.option.equals(option)) {
                    return k;
                }
            }
            throw new IllegalArgumentException("unknown runtime argument " + option
                    + " (are the launcher and the runtime from the same build?)");
        }
    }

    /** The arguments {@link #parse} turns back into this config. */
    public List<String> toArgs() {
        List<String> args = new ArrayList<>();
        for (Key k : Key.values()) {
            String v = k.value.apply(this);
            if (k.flag) {
                if (v != null) {
                    args.add(k.option);
                }
            } else if (v != null) {
                args.add(k.option + "=" + v);
            }
        }
        return args;
    }

    public static RuntimeConfig parse(String[] args) {
        Map<Key, String> kv = new EnumMap<>(Key.class);
        for (String a : args) {
            int eq = a.indexOf('=');
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("runtime argument '" + a + "' is not --key=value");
            }
            Key key = Key.of(eq < 0 ? a : a.substring(0, eq));
            if (key.flag != (eq < 0)) {
                throw new IllegalArgumentException("runtime argument '" + a + "': " + key.option
                        + (key.flag ? " takes no value" : " needs a value (" + key.option + "=...)"));
            }
            if (kv.put(key, eq < 0 ? "" : a.substring(eq + 1)) != null) {
                throw new IllegalArgumentException("runtime argument " + key.option + " is given twice");
            }
        }
        String rv = need(kv, Key.RENDEZVOUS);
        int colon = rv.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException(Key.RENDEZVOUS.option + " must be HOST:PORT, got " + rv);
        }
        String localCapacity = need(kv, Key.LOCAL_CAPACITY);
        org.fanstore.runtime.placement.LocalCapacity.parse(localCapacity);
        String prefetch = need(kv, Key.PREFETCH);
        if (!prefetch.equals("on") && !prefetch.equals("off")) {
            throw new IllegalArgumentException(Key.PREFETCH.option + " must be on or off, got " + prefetch);
        }
        return new RuntimeConfig(intOf(Key.RANK, need(kv, Key.RANK)), intOf(Key.SIZE, need(kv, Key.SIZE)),
                rv.substring(0, colon), intOf(Key.RENDEZVOUS, rv.substring(colon + 1)), need(kv, Key.DATA),
                Path.of(need(kv, Key.LOCAL_DIR)), Path.of(need(kv, Key.SHM_DIR)),
                longOf(Key.CACHE_MB, need(kv, Key.CACHE_MB)), intOf(Key.REPLICAS, need(kv, Key.REPLICAS)),
                need(kv, Key.JOB_ID),
                Unpack.of(need(kv, Key.UNPACK)), kv.containsKey(Key.VERBOSE),
                localCapacity, prefetch.equals("on"),
                kv.containsKey(Key.OUTPUT_DIR) ? Path.of(kv.get(Key.OUTPUT_DIR)) : null,
                Path.of(need(kv, Key.SECRET_FILE)), TableLoad.of(need(kv, Key.TABLE_LOAD)),
                OnNodeLoss.of(need(kv, Key.ON_NODE_LOSS)));
    }

    private static String need(Map<Key, String> kv, Key key) {
        String v = kv.get(key);
        if (v == null) {
            throw new IllegalArgumentException("runtime argument " + key.option + " is missing");
        }
        return v;
    }

    private static int intOf(Key key, String v) {
        long n = longOf(key, v);
        if (n != (int) n) {
            throw new IllegalArgumentException(key.option + " is out of range: " + v);
        }
        return (int) n;
    }

    private static long longOf(Key key, String v) {
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key.option + " must be a number, got '" + v + "'");
        }
    }
}
