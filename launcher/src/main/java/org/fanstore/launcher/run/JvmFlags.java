package org.fanstore.launcher.run;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * The flags of the JVMs fanstore starts, from {@code jvm.flags} beside this class (written by the build from the
 * root pom's {@code fanstore.jvm.*} properties, the one place they are set). The launcher's own set is read by
 * the fanstore script; this class gives the runtime ranks theirs: a long-lived server is not a short command,
 * so the two sets are separate.
 */
public final class JvmFlags {
    private static final String RESOURCE = "jvm.flags";

    private JvmFlags() {
    }

    /** The runtime ranks' flags: the build's runtime set, then the user's FANSTORE_RUNTIME_JAVA_OPTS. */
    static List<String> runtime(Map<String, String> env) {
        List<String> flags = new ArrayList<>(split(build("runtime")));
        flags.addAll(split(env.getOrDefault("FANSTORE_RUNTIME_JAVA_OPTS", "")));
        return flags;
    }

    /** The build's runtime set alone, as a list (what a class archive is dumped with). */
    public static List<String> buildRuntime() {
        return split(build("runtime"));
    }

    /** One set of flags as the build wrote it ("launcher" or "runtime"). */
    static String build(String set) {
        Properties p = new Properties();
        try (InputStream in = JvmFlags.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the launcher: rebuild fanstore");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String flags = p.getProperty(set);
        if (flags == null || flags.contains("${")) {
            throw new IllegalStateException(RESOURCE + " has no " + set + " flags filled in by the build: rebuild"
                    + " fanstore with Maven");
        }
        return flags;
    }

    private static List<String> split(String flags) {
        List<String> out = new ArrayList<>();
        for (String flag : flags.trim().split("\\s+")) {
            if (!flag.isEmpty()) {
                out.add(flag);
            }
        }
        return out;
    }
}
