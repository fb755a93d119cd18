package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.fanstore.launcher.run.FaultsTest.Job;
import org.fanstore.runtime.Await;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runtime's liveness as a reader in a PID namespace of its own sees it (issue 47): there the runtime's pid
 * names nothing, so only its lock on {@code ctl.lock} tells slow from dead (shm README, "Liveness"). The reader
 * runs under {@code unshare --pid --fork --mount-proc} (what bwrap --unshare-pid and podman do to the pid space)
 * and times one open that needs the runtime (--unpack lazy, --prefetch off: nothing is opened without it).
 */
class ContainerLivenessTest {
    private static final int FILES = 8;
    /** The shim's stale-heartbeat threshold (Timing: 3 s); the runtime is stopped well past it. */
    private static final long STOP_MS = 4_500;

    @TempDir
    static Path work;
    static Path data;
    static Path src;

    @BeforeAll
    static void prepare() throws Exception {
        src = work.resolve("src/ds");
        Files.createDirectories(src.resolve("a"));
        for (int i = 0; i < FILES; i++) {
            Files.writeString(src.resolve("a/f" + i + ".txt"), "file " + i + "\n".repeat(i + 1));
        }
        data = work.resolve("ds.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                data.toString(), "--partitions", "2"));
        Files.writeString(work.resolve("reader.py"), String.join("\n",
            "import errno, os, sys, time",
            "go, result = sys.argv[1], sys.argv[2]",
            "while not os.path.exists(go):",
            "    time.sleep(0.05)",
            "t0 = time.monotonic()",
            "try:",
            "    for i in range(" + FILES + "):",
            "        got = open('/fanstore/ds/a/f%d.txt' % i).read()",
            "        want = open(os.path.join(sys.argv[3], 'a/f%d.txt' % i)).read()",
            "        assert got == want, i",
            "    line = 'OK %.3f pid %d' % (time.monotonic() - t0, os.getpid())",
            "except OSError as e:",
            "    line = 'ERR %s %.3f pid %d' % (errno.errorcode.get(e.errno, e.errno), time.monotonic() - t0,"
                + " os.getpid())",
            "with open(result + '.tmp', 'w') as f:",
            "    f.write(line)",
            "os.rename(result + '.tmp', result)",
            ""));
    }

    /** A job named {@code id} whose reader waits for the file {@code go}, then writes its line to {@code result}. */
    private record Run(String id, Path go, Path result, Job job) {
    }

    /** Starts a job (a fresh id starting with {@code prefix}) whose reader runs in a PID namespace of its own. */
    private static Run start(String prefix) throws Exception {
        String id = prefix + System.nanoTime();
        Path go = work.resolve(id + ".go");
        Path result = work.resolve(id + ".result");
        return new Run(id, go, result, Job.start(data, work, Map.of("FANSTORE_JOB_ID", id),
            List.of("--unpack", "lazy", "--prefetch", "off"), "exec unshare --pid --fork --mount-proc python3 "
                + work.resolve("reader.py") + " " + go + " " + result + " " + src));
    }

    private static void kill(String signal, ProcessHandle p) throws Exception {
        assertEquals(0, new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start().waitFor());
    }

    @Test
    void aRuntimeStoppedPastTheHeartbeatThresholdIsWaitedForFromAPidNamespace() throws Exception {
        Run run = start("tnsstop");
        Job j = run.job();
        ProcessHandle runtime = null;
        try {
            j.awaitReady(1);
            runtime = Job.runtimeOf(run.id(), 0);
            kill("STOP", runtime);
            Files.createFile(run.go());
            Thread.sleep(STOP_MS);
            assertTrue(!Files.exists(run.result()),
                () -> "the reader did not wait for a stopped runtime: " + read(run.result()));
            kill("CONT", runtime);
            Await.until(Duration.ofSeconds(30), () -> Files.exists(run.result()), "the reader never finished");
            String line = read(run.result());
            assertTrue(line.startsWith("OK "), line + "\n" + j.stderr());
            double waited = Double.parseDouble(line.split(" ")[1]);
            // It waited past the 3 s stale threshold (the reader notices `go` up to ~0.3 s late), then got through.
            assertTrue(waited >= 3.5 && waited < STOP_MS / 1e3 + 5, line);
            assertTrue(j.launcher.waitFor(60, TimeUnit.SECONDS), () -> "job still running:\n" + j.stderr());
            assertEquals(0, j.launcher.exitValue(), j.stderr());
            System.out.printf("runtime stopped %.1f s under a reader in a PID namespace (%s): open waited, then"
                + " read every file%n", STOP_MS / 1e3, line);
        } finally {
            if (runtime != null && runtime.isAlive()) {
                kill("CONT", runtime);
            }
            j.kill();
        }
    }

    @Test
    void aKilledRuntimeFailsAReaderInAPidNamespaceWithEioWithoutAHang() throws Exception {
        Run run = start("tnskill");
        Job j = run.job();
        try {
            j.awaitReady(1);
            ProcessHandle runtime = Job.runtimeOf(run.id(), 0);
            kill("STOP", runtime);  // the open is pending and the heartbeat goes stale with the lock held
            Files.createFile(run.go());
            Thread.sleep(3_500);
            // The launcher would end the job (killing the reader) as soon as it reaps its runtime: stopped, it
            // cannot, and the runtime stays a zombie, its pid still there; the lock is freed at death all the same.
            kill("STOP", ProcessHandle.of(j.pid()).orElseThrow());
            long t0 = System.nanoTime();
            runtime.destroyForcibly();  // SIGKILL: the kernel frees ctl.lock
            Await.until(Duration.ofSeconds(10), () -> Files.exists(run.result()) || !j.launcher.isAlive(),
                "the reader hangs on a dead runtime");
            assertTrue(Files.exists(run.result()), () -> "no result from the reader:\n" + j.stderr());
            double afterKill = (System.nanoTime() - t0) / 1e9;
            kill("CONT", ProcessHandle.of(j.pid()).orElseThrow());
            String line = read(run.result());
            assertTrue(line.startsWith("ERR EIO "), line + "\n" + j.stderr());
            assertTrue(afterKill < 2, "EIO " + afterKill + " s after the kill");
            assertTrue(j.launcher.waitFor(30, TimeUnit.SECONDS), () -> "job still running:\n" + j.stderr());
            System.out.printf("runtime killed under a reader in a PID namespace: %s, %.2f s after the kill%n", line,
                afterKill);
        } finally {
            ProcessHandle.of(j.pid()).ifPresent(p -> {
                try {
                    kill("CONT", p);
                } catch (Exception e) {
                    // gone already
                }
            });
            j.kill();
        }
    }

    private static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p) : "(none)";
        } catch (java.io.IOException e) {
            return "(unreadable)";
        }
    }
}
