package org.fanstore.runtime.output;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The drain as a mirror of a real upper directory onto a real output directory: files, modes, mtimes, symlinks,
 * empty directories, renames, removals, the published-unchanged rule, what the final pass reports, a crash.
 */
class DirectoryDrainTest {
    @TempDir
    Path upper;
    @TempDir
    Path out;

    private final MapOutputNamespace journal = new MapOutputNamespace(Set.of());
    private long nextId = OutputObjects.FIRST;

    private DirectoryDrain drain() {
        return new DirectoryDrain(out, upper, 0, 1, journal, key -> key.equals("input") || key.equals("input/unused"));
    }

    private Path write(String key, String content, String mode) throws IOException {
        Path p = upper.resolve(key);
        Files.createDirectories(p.getParent());
        Files.writeString(p, content);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(mode));
        return p;
    }

    /** What PUBLISH commits: the file's size and mtime, held by {@code holder}. */
    private void publish(String key, int holder) throws IOException {
        Path p = upper.resolve(key);
        Instant t = Files.getLastModifiedTime(p).toInstant();
        journal.apply(new OutputRecord(OutputRecord.Kind.FILE, key.getBytes(UTF_8), null, Files.size(p), 0100644,
                t.getEpochSecond() * 1_000_000_000L + t.getNano(), holder, nextId++, false));
    }

    private String mode(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void mirrorsFilesModesMtimesSymlinksAndEmptyDirectories() throws Exception {
        write("input/a.txt", "alpha", "rw-r-----");
        write("run.sh", "#!/bin/sh\n", "rwxr-xr-x");
        Files.setLastModifiedTime(upper.resolve("run.sh"),
                FileTime.from(Instant.ofEpochSecond(1_600_000_000, 123_456_789)));
        Files.createDirectories(upper.resolve("empty"));
        Files.setPosixFilePermissions(upper.resolve("empty"), PosixFilePermissions.fromString("rwxr-x---"));
        Files.createDirectories(upper.resolve("input/unused"));
        Files.createSymbolicLink(upper.resolve("link"), Path.of("input/a.txt"));
        Files.createSymbolicLink(upper.resolve("dangling"), Path.of("nowhere"));
        new ProcessBuilder("mkfifo", upper.resolve("fifo").toString()).start().waitFor();
        publish("input/a.txt", 0);
        publish("run.sh", 0);
        DirectoryDrain d = drain();
        assertEquals(Map.of(), d.passNow(false));
        assertEquals("alpha", Files.readString(out.resolve("input/a.txt")));
        assertEquals("rw-r-----", mode(out.resolve("input/a.txt")));
        assertEquals("rwxr-xr-x", mode(out.resolve("run.sh")));
        assertEquals(Files.getLastModifiedTime(upper.resolve("run.sh")),
                Files.getLastModifiedTime(out.resolve("run.sh")));
        assertEquals(Files.getLastModifiedTime(upper.resolve("input/a.txt")),
                Files.getLastModifiedTime(out.resolve("input/a.txt")));
        assertTrue(Files.isDirectory(out.resolve("empty")));
        assertEquals("rwxr-x---", mode(out.resolve("empty")));
        assertFalse(Files.exists(out.resolve("input/unused")), "an input directory only as a parent");
        assertEquals(Path.of("input/a.txt"), Files.readSymbolicLink(out.resolve("link")));
        assertEquals(Path.of("nowhere"), Files.readSymbolicLink(out.resolve("dangling")));
        assertFalse(Files.exists(out.resolve("fifo"), LinkOption.NOFOLLOW_LINKS), "fifos are not drained");
        assertEquals(Set.of("dangling", "empty", "input", "input/a.txt", "link", "run.sh"), tree(out).keySet());
        // a chmod after publish reaches the copy without copying again
        Files.setPosixFilePermissions(upper.resolve("run.sh"), PosixFilePermissions.fromString("r-x------"));
        assertEquals(Map.of(), d.passNow(false));
        assertEquals("r-x------", mode(out.resolve("run.sh")));
        assertEquals(Set.of(), d.finish(Duration.ofSeconds(30)).failed().keySet());
        assertEquals(2, d.finish(Duration.ofSeconds(30)).copiedFiles());
    }

    @Test
    void duringTheJobOnlyFilesPublishedUnchangedAreCopiedAndTheFinalPassCopiesTheRest() throws Exception {
        DirectoryDrain d = drain();
        write("x", "first", "rw-r--r--");
        d.passNow(false);
        assertFalse(Files.exists(out.resolve("x")), "never published: still being written");
        publish("x", 0);
        d.passNow(false);
        assertEquals("first", Files.readString(out.resolve("x")));
        Files.writeString(upper.resolve("x"), " and more", StandardOpenOption.APPEND);
        Files.setLastModifiedTime(upper.resolve("x"), FileTime.from(Instant.now().plusSeconds(5)));
        d.passNow(false);
        assertEquals("first", Files.readString(out.resolve("x")), "written since its publish: not copied half-done");
        write("y", "never closed", "rw-r--r--");
        DirectoryDrain.Report r = d.finish(Duration.ofSeconds(30));
        assertEquals(Set.of(), r.failed().keySet());
        assertEquals("first and more", Files.readString(out.resolve("x")));
        assertEquals("never closed", Files.readString(out.resolve("y")));
    }

    @Test
    void whatTheFinalPassHasNoTimeLeftForIsReportedByName() throws Exception {
        AtomicLong now = new AtomicLong();
        DirectoryDrain d = new DirectoryDrain(out, upper, 0, 1, journal, key -> false,
                () -> now.getAndAdd(Duration.ofMinutes(1).toNanos()));  // each look at the clock: a minute later
        write("late", "never copied", "rw-r--r--");
        DirectoryDrain.Report r = d.finish(Duration.ofSeconds(30));
        assertEquals(Set.of("late"), r.failed().keySet());
        assertTrue(r.failed().get("late").contains("the job's drain time was up"), r.failed().get("late"));
        assertFalse(Files.exists(out.resolve("late")));
    }

    @Test
    void anotherRanksFileIsNeverCopiedNorDeletedHere() throws Exception {
        DirectoryDrain d = drain();
        write("mine", "v1", "rw-r--r--");
        publish("mine", 0);
        d.passNow(false);
        // another rank published the same key later: its version is in the journal, it drains it
        journal.apply(MapOutputNamespace.file("mine", 2, 1, 99, false));
        Files.delete(upper.resolve("mine"));  // what the applier does to our upper
        write("theirs", "local leftover", "rw-r--r--");
        journal.apply(MapOutputNamespace.file("theirs", 2, 1, 100, false));
        DirectoryDrain.Report r = d.finish(Duration.ofSeconds(30));
        assertEquals(Set.of(), r.failed().keySet());
        assertEquals("v1", Files.readString(out.resolve("mine")), "left for the other rank to replace");
        assertFalse(Files.exists(out.resolve("theirs")));
    }

    @Test
    void renamesAreRenamesEvenOverAnExistingFileAndRmMinusRRemovesTheTree() throws Exception {
        DirectoryDrain d = drain();
        write("ckpt/model.pt", "old", "rw-r--r--");
        write("ckpt/tmp", "new", "rw-------");
        write("logs/a/1.log", "1", "rw-r--r--");
        write("logs/2.log", "2", "rw-r--r--");
        Files.createDirectories(upper.resolve("logs/empty"));
        for (String k : new String[] {"ckpt/model.pt", "ckpt/tmp", "logs/a/1.log", "logs/2.log"}) {
            publish(k, 0);
        }
        assertEquals(Map.of(), d.passNow(false));
        assertEquals(4, d.copiedFiles());
        // os.replace(tmp, model.pt) and rm -r logs
        Files.move(upper.resolve("ckpt/tmp"), upper.resolve("ckpt/model.pt"),
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        journal.apply(MapOutputNamespace.rename("ckpt/tmp", "ckpt/model.pt", 0, 0));
        try (Stream<Path> s = Files.walk(upper.resolve("logs"))) {
            for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
        assertEquals(Map.of(), d.passNow(false));
        assertEquals("new", Files.readString(out.resolve("ckpt/model.pt")));
        assertEquals("rw-------", mode(out.resolve("ckpt/model.pt")));
        assertEquals(4, d.copiedFiles(), "renamed in the output directory, not copied again");
        assertEquals(Set.of("ckpt", "ckpt/model.pt"), tree(out).keySet());
    }

    @Test
    void aFileChangedDuringItsCopyIsNoFailureAndTheNextPassTakesIt() throws Exception {
        Path big = upper.resolve("big");
        byte[] block = random(1 << 20, 3);
        try (var o = Files.newOutputStream(big)) {
            for (int i = 0; i < 256; i++) {
                o.write(block);
            }
        }
        DirectoryDrain d = drain();
        Thread changer = new Thread(() -> {
            try {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (System.nanoTime() < deadline) {
                    if (tree(out).keySet().stream().anyMatch(n -> n.contains(".fanstore-partial-"))) {
                        Files.write(big, new byte[] {1, 2, 3}, StandardOpenOption.APPEND);
                        return;
                    }
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        changer.start();
        Map<String, String> failed = d.passNow(true);
        changer.join();
        assertEquals(Map.of(), failed, "a source that changes during its copy is not a failure");
        assertFalse(Files.exists(out.resolve("big")), "the copy of the changed file did not land");
        assertEquals(Map.of(), d.passNow(true));
        assertEquals(-1L, Files.mismatch(big, out.resolve("big")));
        assertEquals(Set.of("big"), tree(out).keySet(), "no partial name left behind");
    }

    @Test
    void onlyWhatTheFinalPassCannotSaveIsReported() throws Exception {
        DirectoryDrain d = drain();
        write("blocked", "x", "rw-r--r--");
        write("fine", "y", "rw-r--r--");
        publish("blocked", 0);
        Files.createDirectories(out.resolve("blocked/inside"));  // a non-empty directory where the file must go
        Map<String, String> during = d.passNow(false);
        assertEquals(Set.of("blocked"), during.keySet(), "found during the job, tried again later");
        Files.delete(out.resolve("blocked/inside"));
        Files.delete(out.resolve("blocked"));
        assertEquals(Set.of(), d.finish(Duration.ofSeconds(30)).failed().keySet(), "saved by the final pass");

        DirectoryDrain e = new DirectoryDrain(out, upper, 0, 1, journal, key -> false);
        write("late", "z", "rw-r--r--");
        Files.createDirectories(out.resolve("late/inside"));
        DirectoryDrain.Report r = e.finish(Duration.ofSeconds(30));
        assertEquals(Set.of("late"), r.failed().keySet(), "not saved by the final pass: the job exits 4");
        assertTrue(r.failed().get("late").contains(out.resolve("late").toString()), r.failed().get("late"));
    }

    @Test
    void wakeUpsRunPassesOnTheDrainThread() throws Exception {
        DirectoryDrain d = drain().start();
        write("w", "woken", "rw-r--r--");
        publish("w", 0);
        d.wake();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!Files.exists(out.resolve("w")) && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals("woken", Files.readString(out.resolve("w")));
        assertEquals(Set.of(), d.finish(Duration.ofSeconds(30)).failed().keySet());
    }

    @Test
    @Timeout(90)
    void aCrashMidCopyNeverLeavesAPartialFileUnderTheFinalName() throws Exception {
        Path big = upper.resolve("ckpt.bin");
        byte[] block = random(1 << 20, 6);
        try (var o = Files.newOutputStream(big)) {
            for (int i = 0; i < 384; i++) {
                o.write(block);
            }
        }
        Path log = Files.createTempFile("drain-crash", ".log");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-cp", System.getProperty("java.class.path") + File.pathSeparator,
                DrainCrashMain.class.getName(), upper.toString(), out.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            boolean sawPartial = false;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!sawPartial && p.isAlive() && System.nanoTime() < deadline) {
                sawPartial = tree(out).keySet().stream().anyMatch(n -> n.contains(".fanstore-partial-"));
                Thread.sleep(2);
            }
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            assertTrue(sawPartial, "the copy was never caught in progress: " + Files.readString(log));
            assertFalse(Files.exists(out.resolve("ckpt.bin")), "killed mid-copy: the final name must not exist");
        } finally {
            p.destroyForcibly();
            Files.deleteIfExists(log);
        }
        // A later drain of the same file still ends with the whole file under the final name.
        assertEquals(Set.of(), drain().finish(Duration.ofSeconds(60)).failed().keySet());
        assertEquals(-1L, Files.mismatch(big, out.resolve("ckpt.bin")));
    }

    /**
     * CPython's UtimeTests: utime to an atime older than the mtime, then stat. The drain's reads (listing the
     * directory, copying the file) must not move the atime, as relatime would on a plain read.
     */
    @Test
    void drainReadsLeaveTheJobsAtimes() throws Exception {
        Path file = write("t\u00e6/f1", "content", "rw-r--r--");
        Path dir = file.getParent();
        FileTime atime = FileTime.from(Instant.ofEpochSecond(1, 2_003_000));
        FileTime mtime = FileTime.from(Instant.ofEpochSecond(4, 5_006_000));
        for (Path p : new Path[] {file, dir}) {
            Files.getFileAttributeView(p, BasicFileAttributeView.class).setTimes(mtime, atime, null);
        }
        publish("t\u00e6/f1", 0);
        DirectoryDrain d = drain();
        assertEquals(Map.of(), d.passNow(false));
        assertEquals("content", Files.readString(out.resolve("t\u00e6/f1")));
        for (Path p : new Path[] {file, dir}) {
            assertEquals(atime, Files.readAttributes(p, BasicFileAttributes.class).lastAccessTime(), p.toString());
        }
    }

    /**
     * NameRacesTest's loss, replayed pass by pass on rank 0 of 2: rank 1's file "n" is in the output directory when
     * rank 0's mkdir of the same name is in its upper, before the owner refuses it (the journal has not heard yet,
     * or already holds rank 1's file). The drain made the directory over rank 1's copy, then removed it once the
     * shim undid the mkdir: the name was gone from the output directory, and rank 1 never copied it again.
     */
    @Test
    void aDirectoryNotYetDecidedNeverReplacesAnotherRanksFile() throws Exception {
        DirectoryDrain d = new DirectoryDrain(out, upper, 0, 2, journal, key -> false);
        Files.writeString(out.resolve("n"), "rank 1's bytes");   // drained by rank 1
        Files.writeString(out.resolve("m"), "rank 1's bytes");
        Files.createDirectories(upper.resolve("n"));             // rank 0's mkdir, sent to the owner
        Files.createDirectories(upper.resolve("m"));
        journal.apply(MapOutputNamespace.file("m", 14, 1, 7, false));   // m: the journal has heard already
        assertEquals(Map.of(), d.passNow(false));
        assertEquals("rank 1's bytes", Files.readString(out.resolve("n")), "undecided: not made yet");
        assertEquals("rank 1's bytes", Files.readString(out.resolve("m")), "a file in the namespace");
        journal.apply(MapOutputNamespace.file("n", 14, 1, 8, false));   // the owner refused both mkdirs
        Files.delete(upper.resolve("n"));                        // the shim undoes them
        Files.delete(upper.resolve("m"));
        assertEquals(Map.of(), d.passNow(false));
        assertEquals(Set.of(), d.finish(Duration.ofSeconds(30)).failed().keySet());
        assertEquals("rank 1's bytes", Files.readString(out.resolve("n")));
        assertEquals("rank 1's bytes", Files.readString(out.resolve("m")));
    }

    /** Once decided, a directory is made over a stale file, and the drain never removes another rank's entry. */
    @Test
    void aDecidedDirectoryIsMadeAndWhatAnotherRankPutThereSinceIsLeft() throws Exception {
        DirectoryDrain d = new DirectoryDrain(out, upper, 0, 2, journal, key -> false);
        Files.createDirectories(upper.resolve("d"));
        assertEquals(Map.of(), d.passNow(false));
        assertFalse(Files.exists(out.resolve("d")), "not decided yet");
        journal.apply(MapOutputNamespace.dir("d"));
        assertEquals(Map.of(), d.passNow(false));
        assertTrue(Files.isDirectory(out.resolve("d")));
        // rmdir d here, then rank 1 writes a file d and drains it: this rank's pass leaves it
        Files.delete(upper.resolve("d"));
        journal.apply(new OutputRecord(OutputRecord.Kind.RMDIR, "d".getBytes(UTF_8), null, 0, 0, 0, -1, 0, false));
        Files.delete(out.resolve("d"));
        Files.writeString(out.resolve("d"), "rank 1's file");
        journal.apply(MapOutputNamespace.file("d", 13, 1, 9, false));
        assertEquals(Map.of(), d.passNow(false));
        assertEquals("rank 1's file", Files.readString(out.resolve("d")));
        // a file this rank drained, unlinked since, and rank 1's empty directory made under its name: left
        write("f", "mine", "rw-r--r--");
        publish("f", 0);
        d.settled(journal.lookup("f".getBytes(UTF_8)).orElseThrow());
        assertEquals(Map.of(), d.passNow(false));
        assertEquals("mine", Files.readString(out.resolve("f")));
        Files.delete(upper.resolve("f"));
        journal.apply(MapOutputNamespace.unlink("f"));
        journal.apply(MapOutputNamespace.dir("f"));
        Files.delete(out.resolve("f"));
        Files.createDirectory(out.resolve("f"));                 // drained by rank 1
        assertEquals(Map.of(), d.passNow(false));
        assertEquals(Set.of(), d.finish(Duration.ofSeconds(30)).failed().keySet());
        assertTrue(Files.isDirectory(out.resolve("f")), "another rank's directory");
    }

    /**
     * The rename of a drained file is in the upper before its owner decides (NameRacesTest's rename mode): moved in
     * the output directory meanwhile, it replaced the file that won the name, or made the directory another rank
     * had just removed. Now it moves there once decided, and a refused one leaves the directory as it was.
     */
    @Test
    void aRenameNotYetDecidedMovesNothingInTheOutputDirectory() throws Exception {
        DirectoryDrain d = new DirectoryDrain(out, upper, 0, 2, journal, key -> false);
        write("t", "checkpoint", "rw-r--r--");
        publish("t", 0);
        d.settled(journal.lookup("t".getBytes(UTF_8)).orElseThrow());
        assertEquals(Map.of(), d.passNow(false));
        assertEquals("checkpoint", Files.readString(out.resolve("t")));
        Files.writeString(out.resolve("k"), "rank 1's file");    // drained by rank 1, which won "k"
        Files.move(upper.resolve("t"), upper.resolve("k"));      // the shim's rename, sent to the owner
        Files.createDirectories(upper.resolve("gone"));
        Files.move(upper.resolve("k"), upper.resolve("gone/k"));
        assertEquals(Map.of(), d.passNow(false));
        assertEquals("rank 1's file", Files.readString(out.resolve("k")));
        assertFalse(Files.exists(out.resolve("gone")), "a directory another rank removed is not made again");
        Files.move(upper.resolve("gone/k"), upper.resolve("t"));  // refused: the shim moves it back
        Files.delete(upper.resolve("gone"));
        assertEquals(Map.of(), d.passNow(false));
        assertEquals("checkpoint", Files.readString(out.resolve("t")));
        assertEquals("rank 1's file", Files.readString(out.resolve("k")));
        // decided: the rename record moves the file's entry, and the copy is moved, not copied again
        Files.move(upper.resolve("t"), upper.resolve("k2"));
        journal.apply(MapOutputNamespace.rename("t", "k2", 0, 0));
        assertEquals(Map.of(), d.passNow(false));
        assertEquals("checkpoint", Files.readString(out.resolve("k2")));
        assertFalse(Files.exists(out.resolve("t")));
        assertEquals(1, d.copiedFiles());
        assertEquals(Set.of(), d.finish(Duration.ofSeconds(30)).failed().keySet());
        assertEquals(Set.of("k", "k2"), tree(out).keySet());
    }

    @Test
    void partialNamesAreRecognisedForTheNextJobsCleanup() {
        String name = CrashSafeCopy.partialName("model.pt", 4242, 7);
        assertEquals(4242, CrashSafeCopy.partialOwner(name));
        assertEquals("model.pt", CrashSafeCopy.partialTarget(name));
        assertEquals(-1, CrashSafeCopy.partialOwner("model.pt"));
    }

    /** Every path under root (relative), with whether it is a directory. */
    private static Map<String, Boolean> tree(Path root) throws IOException {
        Map<String, Boolean> names = new TreeMap<>();
        try (Stream<Path> s = Files.walk(root)) {
            s.filter(p -> !p.equals(root)).forEach(p -> names.put(root.relativize(p).toString(),
                    Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)));
        } catch (java.io.UncheckedIOException raced) {
            return tree(root);  // a partial name came or went while walking
        }
        return names;
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }
}
