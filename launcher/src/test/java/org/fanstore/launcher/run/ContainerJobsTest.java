package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Jobs whose command is a container (issue 47): tests/containers/bwrap_job.sh with bwrap and with podman, a
 * Python reader of a Debian 11 root (glibc 2.31) in its own PID and mount namespaces reading every file right and
 * writing a checkpoint drained to --output-dir. The root is built once per machine into
 * /var/cache/fanstore/bullseye-rootfs (rootfs.sh, bounded here to 5 min); skipped, saying so, only when
 * debootstrap cannot reach the Debian mirror.
 */
class ContainerJobsTest {
    private static final long ROOTFS_MINUTES = 5;
    private static final long JOB_SECONDS = 120;

    @BeforeAll
    static void rootfs() throws Exception {
        Path script = FanstoreProcess.repo().resolve("tests/containers/rootfs.sh");
        Process p = new ProcessBuilder(script.toString()).redirectErrorStream(true).start();
        boolean done = p.waitFor(ROOTFS_MINUTES, TimeUnit.MINUTES);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!done) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        if (!done || p.exitValue() != 0) {
            String log = readLog();
            Assumptions.assumeFalse(unreachable(log), "SKIP container jobs: debootstrap cannot reach the Debian"
                + " mirror to build the bullseye root (/var/cache/fanstore/bullseye.log):\n" + tail(log));
            throw new AssertionError("rootfs.sh " + (done ? "failed" : "took over " + ROOTFS_MINUTES + " min")
                + ":\n" + out + "\n" + tail(log));
        }
    }

    @Test
    void aReaderUnderBwrapWithItsOwnPidNamespace() throws Exception {
        job("bwrap");
    }

    @Test
    void aReaderUnderPodmanRun() throws Exception {
        job("podman");
    }

    private static void job(String runner) throws Exception {
        Path script = FanstoreProcess.repo().resolve("tests/containers/bwrap_job.sh");
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(script.toString(), runner).redirectErrorStream(true).start();
        boolean done = p.waitFor(JOB_SECONDS, TimeUnit.SECONDS);
        if (!done) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(done && p.exitValue() == 0 && out.contains("PASS " + runner + "_job"), out);
        assertTrue(out.contains("reader: 41 files checksummed under glibc 2.31"), out);
        System.out.printf("%s job: %.1f s%n", runner, (System.nanoTime() - t0) / 1e9);
    }

    private static boolean unreachable(String log) {
        return log.contains("Failed getting release file") || log.contains("Couldn't download")
            || log.contains("Could not resolve") || log.contains("Temporary failure in name resolution")
            || log.contains("Connection refused") || log.contains("Network is unreachable");
    }

    private static String readLog() {
        try {
            Path log = Path.of(System.getenv().getOrDefault("FANSTORE_ROOTFS_CACHE", "/var/cache/fanstore"),
                "bullseye.log");
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            return "";
        }
    }

    private static String tail(String s) {
        return s.length() <= 2_000 ? s : s.substring(s.length() - 2_000);
    }
}
