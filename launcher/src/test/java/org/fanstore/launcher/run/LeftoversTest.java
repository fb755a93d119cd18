package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35, leftovers of failed jobs, with real processes and real signals: lz4-java's native library lives in
 * the rank's local directory and goes with it when the job fails; a drain cut off by SIGKILL is named at the next
 * job's start on the same output directory, and its hidden partial copy removed.
 */
class LeftoversTest {
    @TempDir
    static Path work;
    static Path data;

    @BeforeAll
    static void lz4Dataset() throws Exception {
        Path src = Files.createDirectories(work.resolve("src/lz"));
        for (int i = 0; i < 4; i++) {
            Files.writeString(src.resolve("t" + i + ".txt"), ("compressible line " + i + "\n").repeat(5000));
        }
        data = work.resolve("lz.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                data.toString(), "--compress", "lz4"));
    }

    private static Process start(Path log, String jobId, String... args) throws IOException {
        List<String> cmd = new java.util.ArrayList<>(List.of(FanstoreProcess.repo().resolve("fanstore").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(work.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().put("FANSTORE_JOB_ID", jobId);
        return pb.start();
    }

    /** The runtime JVM the launcher started (a descendant running RuntimeMain). */
    private static ProcessHandle runtimeOf(Process launcher) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            Optional<ProcessHandle> rt = launcher.descendants().filter(h -> cmdline(h).contains(
                    "org.fanstore.runtime.RuntimeMain")).findFirst();
            if (rt.isPresent()) {
                return rt.get();
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no runtime started");
    }

    private static String cmdline(ProcessHandle h) {
        try {
            return new String(Files.readAllBytes(Path.of("/proc", Long.toString(h.pid()), "cmdline")),
                    StandardCharsets.UTF_8);
        } catch (IOException gone) {
            return "";
        }
    }

    /** Waits until {@code what} holds, or fails naming it. */
    private static void await(String what, java.util.concurrent.Callable<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.call()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            Thread.sleep(10);
        }
    }

    private static Optional<Path> lz4Library(ProcessHandle runtime) {
        try (Stream<String> maps = Files.lines(Path.of("/proc", Long.toString(runtime.pid()), "maps"))) {
            return maps.filter(l -> l.contains("liblz4-java")).map(l -> Path.of(l.substring(l.indexOf('/'))))
                    .findFirst();
        } catch (IOException | java.io.UncheckedIOException gone) {
            return Optional.empty();
        }
    }

    @Test
    void lz4NativeLibraryLivesInTheRankDirectoryAndGoesWithAFailedJob() throws Exception {
        Path local = Files.createDirectories(work.resolve("local-lz4"));
        Process launcher = start(work.resolve("lz4.log"), "lz4" + System.nanoTime(), "run", "--ranks", "1",
                "--data", data.toString(), "--local-dir", local.toString(), "--", "sh", "-c",
                "cat /fanstore/lz/t0.txt >/dev/null; sleep 60");
        try {
            ProcessHandle runtime = runtimeOf(launcher);
            await("the runtime to load liblz4-java", () -> lz4Library(runtime).isPresent());
            Path library = lz4Library(runtime).orElseThrow();
            assertTrue(library.startsWith(local), "the library must be in the rank's local directory: " + library);
            runtime.destroyForcibly();   // SIGKILL: no exit hook of the runtime runs
            assertTrue(launcher.waitFor(60, TimeUnit.SECONDS), "the job did not end");
            assertEquals(3, launcher.exitValue(), Files.readString(work.resolve("lz4.log")));
            assertFalse(Files.exists(library), library + " was left behind");
            try (Stream<Path> s = Files.list(local)) {
                assertEquals(List.of(), s.toList(), "the failed job left something in --local-dir");
            }
        } finally {
            launcher.descendants().forEach(ProcessHandle::destroyForcibly);
            launcher.destroyForcibly();
        }
    }

    /**
     * A `fanstore cat` of an LZ4 file blocked on a full stdout pipe (lz4-java's library loaded), killed with
     * SIGKILL: the library is in the launcher's own directory, not loose in /tmp, and the next fanstore command
     * removes that directory.
     */
    @Test
    void aKilledLaunchersLz4LibraryIsInItsOwnDirectoryAndTheNextCommandRemovesIt() throws Exception {
        Path tmp = Files.createDirectories(work.resolve("launcher-tmp"));
        ProcessBuilder pb = new ProcessBuilder(FanstoreProcess.repo().resolve("fanstore").toString(), "cat",
                data.toString(), "t0.txt").redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("TMPDIR", tmp.toString());
        Process cat = pb.start();   // stdout is a pipe nobody reads: the cat blocks once it is full
        Path maps = Path.of("/proc/" + cat.pid() + "/maps");
        String loaded = "";
        for (int i = 0; i < 300 && !loaded.contains("liblz4-java"); i++) {
            Thread.sleep(50);
            loaded = Files.exists(maps) ? Files.readString(maps) : "";
        }
        assertTrue(loaded.contains("liblz4-java"), "the cat never loaded lz4-java");
        String uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid").toString();
        Path own = tmp.resolve("fanstore-" + uid).resolve("launcher-" + cat.pid());
        assertTrue(loaded.contains(own.toString()), "lz4-java loaded from elsewhere: " + loaded);
        cat.destroyForcibly();
        assertTrue(cat.waitFor(30, TimeUnit.SECONDS));
        try (Stream<Path> left = Files.list(own)) {
            assertTrue(left.anyMatch(f -> f.getFileName().toString().startsWith("liblz4-java")),
                    "SIGKILL left the library in the launcher's directory");
        }
        FanstoreProcess.Result ls = FanstoreProcess.run(work, Map.of("TMPDIR", tmp.toString()), 60, "ls",
                data.toString());
        assertEquals(0, ls.status(), ls.stderr());
        assertFalse(Files.exists(own), "the next command swept the killed launcher's directory");
        try (Stream<Path> left = Files.list(tmp.resolve("fanstore-" + uid))) {
            assertEquals(List.of(), left.toList(), "the ls removed its own directory at exit");
        }
    }

    @Test
    void aDrainCutOffBySigkillIsNamedAtTheNextJobsStartAndItsPartialRemoved() throws Exception {
        // The output directory behind a bindfs whose writes run at 20 MB/s: each 100 MB checkpoint's copy takes
        // ~5 s, so the freeze below lands mid-way whatever the machine's disk and load (an unthrottled copy of zeros
        // can end within the time a SIGSTOP takes to stop every thread, and did, three times in a row, in one suite
        // run; at 100 MB/s a loaded machine still missed the ~3 s window).
        Path backing = Files.createDirectories(work.resolve("out-backing"));
        Path out = Files.createDirectories(work.resolve("out"));
        Process mount = new ProcessBuilder("bindfs", "--write-rate=20M", backing.toString(), out.toString())
                .redirectErrorStream(true).start();
        String mountSaid = new String(mount.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        Assumptions.assumeTrue(mount.waitFor() == 0, "bindfs could not mount: " + mountSaid);
        try {
            drainCutOff(out);
        } finally {
            FillStressTest.unmountFuse(out);
        }
    }

    private void drainCutOff(Path out) throws Exception {
        Path local = Files.createDirectories(work.resolve("local-drain"));
        String job = "drain" + System.nanoTime();
        Process launcher = start(work.resolve("drain.log"), job, "run", "--ranks", "1", "--data", data.toString(),
                "--local-dir", local.toString(), "--output-dir", out.toString(), "--", "sh", "-c",
                "mkdir -p /fanstore/ck && for i in 1 2 3 4 5; do head -c 100000000 /dev/zero >/fanstore/ck/model-$i.pt"
                        + " && sleep 2; done; sleep 60");
        Path partial = null;
        List<ProcessHandle> all = List.of();
        try {
            ProcessHandle runtime = runtimeOf(launcher);
            // Freeze a copy mid-way. A copy can end between the partial being seen and the freeze: then let the
            // drain go on to the next checkpoint and try again.
            for (int attempt = 0; attempt < 3 && partial == null; attempt++) {
                Path[] found = new Path[1];
                await("the drain's partial copy", () -> {
                    found[0] = partialIn(out.resolve("ck"));
                    return found[0] != null;
                });
                assertEquals(0, new ProcessBuilder("kill", "-STOP", Long.toString(runtime.pid())).start().waitFor());
                // kill returns once the signal is sent, not once every thread stopped: the copy could still land.
                await("every thread of the runtime to stop", () -> allStopped(runtime.pid()));
                if (Files.exists(found[0]) && !Files.exists(landed(found[0]))) {
                    partial = found[0];
                } else {
                    assertEquals(0, new ProcessBuilder("kill", "-CONT", Long.toString(runtime.pid())).start()
                            .waitFor());
                    // wait for that copy's partial only: "no partial at all" could miss the next checkpoint's copy
                    // starting at once, wait it out too, and leave no checkpoint to freeze (seen under load 9)
                    Path ended = found[0];
                    await("the copy that ended to leave its partial", () -> !Files.exists(ended));
                }
            }
            assertTrue(partial != null, "no drain copy could be frozen mid-way in 3 tries");
            all = launcher.descendants().toList();   // the command too: it is in a session of its own
            // Then kill -9 the launcher and the runtime: the copy is cut off for good.
            launcher.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            runtime.destroyForcibly();
            await("the runtime to die", () -> !runtime.isAlive());
        } finally {
            all.forEach(ProcessHandle::destroyForcibly);
            launcher.descendants().forEach(ProcessHandle::destroyForcibly);
            launcher.destroyForcibly();
            // Nobody was left to clean up after two SIGKILLs: the job's shared memory is the test's to remove.
            try (Stream<Path> shm = Files.list(Path.of("/dev/shm"))) {
                for (Path p : shm.filter(p -> p.getFileName().toString().endsWith("-" + job)).toList()) {
                    new ProcessBuilder("rm", "-rf", p.toString()).start().waitFor();
                }
            }
        }
        assertTrue(Files.exists(partial), "the premise: a SIGKILLed drain leaves its partial copy");
        Path target = landed(partial);
        assertFalse(Files.exists(target), "the premise: the file did not land");

        FanstoreProcess.Result next = FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", "next" + System.nanoTime()),
                120, "run", "--ranks", "1", "--data", data.toString(), "--local-dir", work.toString(),
                "--output-dir", out.toString(), "--", "true");
        assertEquals(0, next.status(), next.stderr());
        assertTrue(next.stderr().contains("fanstore: " + target + " was not saved by an earlier"
                + " job") && next.stderr().contains("removed the partial copy " + partial), next.stderr());
        assertFalse(Files.exists(partial), "the hidden partial copy is gone");
        assertEquals(null, partialIn(out.resolve("ck")));
    }

    @Test
    void aPartialOfALiveProcessIsLeftAlone() throws Exception {
        Path out = Files.createDirectories(work.resolve("out-live"));
        Path live = out.resolve(".f.bin.fanstore-partial-" + ProcessHandle.current().pid() + "-0");
        Files.writeString(live, "a copy in progress");
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", "live" + System.nanoTime()),
                120, "run", "--ranks", "1", "--data", data.toString(), "--local-dir", work.toString(),
                "--output-dir", out.toString(), "--", "true");
        assertEquals(0, r.status(), r.stderr());
        assertFalse(r.stderr().contains("was not saved"), r.stderr());
        assertTrue(Files.exists(live));
    }

    /** The file a drain's partial copy (".NAME.fanstore-partial-...") becomes when it lands. */
    private static Path landed(Path partial) {
        String name = partial.getFileName().toString();
        return partial.resolveSibling(name.substring(1, name.indexOf(".fanstore-partial-")));
    }

    /** Whether every thread of the process is stopped (state T in /proc), so nothing of it runs any more. */
    private static boolean allStopped(long pid) throws IOException {
        try (Stream<Path> tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : tasks.toList()) {
                String stat;
                try {
                    stat = Files.readString(t.resolve("stat"));
                } catch (IOException gone) {
                    continue;   // a thread that ended runs no more either
                }
                char state = stat.charAt(stat.lastIndexOf(')') + 2);
                if (state != 'T' && state != 't') {
                    return false;
                }
            }
        }
        return true;
    }

    private static Path partialIn(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return null;
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().contains(".fanstore-partial-")).findFirst().orElse(null);
        }
    }
}
