package org.fanstore.launcher.run;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Proves, before anything of the job starts, that the shim loads under the command's LD_PRELOAD. The dynamic
 * loader treats a preload it cannot load (missing, another architecture, built for a newer glibc) as a warning,
 * "ERROR: ld.so: object ... cannot be preloaded ... ignored", and runs the program without it: the command
 * would then run without the mount. So {@code /bin/true} runs with the command's LD_PRELOAD and
 * FANSTORE_SHIM_PROBE naming a file, where the shim's constructor writes a line (interpose-native/src/
 * preload_probe.c); no line, and the job ends with one line naming the shim, what the loader said and what to do.
 * The probe's shim stays inert (no FANSTORE_SHM_DIR). Bounded: {@link #TIMEOUT_SECONDS}.
 */
final class PreloadProbe {
    static final long TIMEOUT_SECONDS = 10;
    /** The oldest glibc the shim is built for (interpose-native/README.md, "Which glibc"). */
    static final String OLDEST_GLIBC = "2.17";
    private static final Pattern IGNORED = Pattern.compile("cannot be preloaded \\((.*)\\): ignored");
    private static final Pattern VERSION = Pattern.compile("version `?'?(GLIBC_[0-9.]+)'? not found");

    private PreloadProbe() {
    }

    /** Why the shim at {@code shim} does not load with {@code preload} as LD_PRELOAD, or null when it does. */
    static String problem(Path shim, String preload) throws IOException, InterruptedException {
        Path proof = Files.createTempFile("fanstore-probe", ".txt");
        Path errors = Files.createTempFile("fanstore-probe", ".err");
        try {
            String tru = Files.isExecutable(Path.of("/bin/true")) ? "/bin/true" : "/usr/bin/true";
            ProcessBuilder pb = new ProcessBuilder(tru).redirectErrorStream(false)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(errors.toFile());
            Map<String, String> env = pb.environment();
            env.remove("FANSTORE_SHM_DIR");
            env.put("LD_PRELOAD", preload);
            env.put("FANSTORE_SHIM_PROBE", proof.toString());
            Process p = pb.start();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return message(shim, "a program with it preloaded did not end within " + TIMEOUT_SECONDS + " s");
            }
            if (Files.readString(proof, StandardCharsets.UTF_8).startsWith("fanstore shim loaded")) {
                return null;
            }
            return message(shim, reason(Files.readString(errors, StandardCharsets.UTF_8), p.exitValue()));
        } finally {
            Files.deleteIfExists(proof);
            Files.deleteIfExists(errors);
        }
    }

    /** What the loader said, shortened to its reason. */
    static String reason(String loaderErrors, int status) {
        Matcher m = IGNORED.matcher(loaderErrors);
        if (m.find()) {
            return "ld.so: " + m.group(1);
        }
        m = VERSION.matcher(loaderErrors);
        if (m.find()) {
            return "ld.so: it needs " + m.group(1) + ", newer than this machine's glibc";
        }
        String first = loaderErrors.lines().filter(l -> !l.isBlank()).findFirst().orElse("").trim();
        return first.isEmpty() ? "no error from the loader, exit status " + status + ", but the shim never ran"
                : first;
    }

    private static String message(Path shim, String reason) {
        return "the shim " + shim + " cannot be preloaded (" + reason + "), so the command would run without"
                + " the mount: not started. It needs glibc " + OLDEST_GLIBC + " or newer on the same architecture"
                + " and must be readable at that path on every node: rebuild it (scripts/setup-debian.sh build)"
                + " or set FANSTORE_SHIM to a copy that is (docs/reliability.md, \"When the shim cannot load\")";
    }
}
