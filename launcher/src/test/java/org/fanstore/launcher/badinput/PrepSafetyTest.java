package org.fanstore.launcher.badinput;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.fanstore.launcher.run.FanstoreProcess;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35: what {@code fanstore prep} may delete and leave behind, with the real command, real files and real
 * signals. {@code --force} replaces only a dataset; an interrupted prep leaves nothing (SIGINT, SIGTERM), and a
 * SIGKILLed one's temporary directory is removed by the next prep of the same output; partitions never outnumber
 * the files; a bad {@code --name} is a usage error.
 */
class PrepSafetyTest {
    @TempDir
    static Path work;
    static Path small;
    static Path large;

    @BeforeAll
    static void sources() throws IOException {
        small = Files.createDirectories(work.resolve("small"));
        for (int i = 0; i < 4; i++) {
            Files.writeString(small.resolve("f" + i), "small " + i + "\n");
        }
        // Enough compressible bytes that lz4hc on one thread takes seconds: a window to signal prep in.
        large = Files.createDirectories(work.resolve("large"));
        Random rnd = new Random(35);
        byte[] words = "the quick brown fox jumps over a lazy dog 0123456789 ".getBytes();
        for (int i = 0; i < 48; i++) {
            byte[] body = new byte[4 << 20];
            for (int j = 0; j < body.length; j++) {
                body[j] = rnd.nextInt(8) == 0 ? (byte) rnd.nextInt(256) : words[rnd.nextInt(words.length)];
            }
            Files.write(large.resolve("big" + i + ".bin"), body);
        }
    }

    private static FanstoreProcess.Result prep(String... args) throws Exception {
        return FanstoreProcess.run(work, Map.of(), 120, Stream.concat(Stream.of("prep"), Stream.of(args))
                .toArray(String[]::new));
    }

    /** Every file under {@code dir} with its bytes, to show nothing changed. */
    private static Map<String, String> snapshot(Path dir) throws IOException {
        Map<String, String> out = new TreeMap<>();
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.toList()) {
                out.put(dir.relativize(p).toString(), Files.isRegularFile(p) ? Files.readString(p) : "<dir>");
            }
        }
        return out;
    }

    /** The names beside {@code output} that start with its name: the dataset and any temporary leftovers. */
    private static List<String> besides(Path output) throws IOException {
        String prefix = output.getFileName().toString();
        try (Stream<Path> s = Files.list(output.getParent())) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(prefix)).sorted().toList();
        }
    }

    @Test
    void forceRefusesADirectoryOfUserFilesAndDeletesNothing() throws Exception {
        Path theirs = Files.createDirectories(work.resolve("theirs.fs/sub"));
        Files.writeString(theirs.resolve("thesis.tex"), "years of work");
        Files.writeString(theirs.getParent().resolve("notes.txt"), "notes");
        Map<String, String> before = snapshot(theirs.getParent());
        FanstoreProcess.Result r = prep("--input", small.toString(), "--output", theirs.getParent().toString(),
                "--force");
        assertEquals(2, r.status(), r.stderr());
        assertTrue(r.stderr().contains(theirs.getParent().toString()) && r.stderr().contains("not a fanstore "
                + "dataset") && r.stderr().contains("nothing was deleted"), r.stderr());
        assertEquals(before, snapshot(theirs.getParent()));
        assertEquals(List.of("theirs.fs"), besides(theirs.getParent()));
    }

    @Test
    void forceRefusesAPlainFileASymlinkAndADatasetHoldingADirectory() throws Exception {
        Path file = work.resolve("file.fs");
        Files.writeString(file, "not a dataset");
        FanstoreProcess.Result r = prep("--input", small.toString(), "--output", file.toString(), "--force");
        assertEquals(2, r.status(), r.stderr());
        assertTrue(r.stderr().contains(file + " is a file, not a fanstore dataset"), r.stderr());
        assertEquals("not a dataset", Files.readString(file));

        Path real = work.resolve("real.fs");
        assertEquals(0, prep("--input", small.toString(), "--output", real.toString()).status());
        Path link = Files.createSymbolicLink(work.resolve("link.fs"), real);
        r = prep("--input", small.toString(), "--output", link.toString(), "--force");
        assertEquals(2, r.status(), r.stderr());
        assertTrue(r.stderr().contains(link + " is a symlink"), r.stderr());
        assertTrue(Files.isSymbolicLink(link));

        Files.createDirectories(real.resolve("my-results"));
        r = prep("--input", small.toString(), "--output", real.toString(), "--force");
        assertEquals(2, r.status(), r.stderr());
        assertTrue(r.stderr().contains("holds my-results"), r.stderr());
        assertTrue(Files.isDirectory(real.resolve("my-results")));
    }

    @Test
    void forceReplacesADatasetAndLeavesNoTemporaryName() throws Exception {
        Path ds = work.resolve("replace.fs");
        assertEquals(0, prep("--input", small.toString(), "--output", ds.toString(), "--name", "one").status());
        FanstoreProcess.Result r = prep("--input", small.toString(), "--output", ds.toString(), "--name", "two",
                "--force");
        assertEquals(0, r.status(), r.stderr());
        assertTrue(Files.readString(ds.resolve("manifest.txt")).contains("name two"));
        assertEquals(List.of("replace.fs"), besides(ds));
    }

    @Test
    void partitionsNeverOutnumberTheFiles() throws Exception {
        Path ds = work.resolve("many.fs");
        FanstoreProcess.Result r = prep("--input", small.toString(), "--output", ds.toString(), "--partitions",
                "100000");
        assertEquals(0, r.status(), r.stderr());
        assertTrue(r.stderr().contains("--partitions 100000 is more than the 4 file(s)"), r.stderr());
        try (Stream<Path> s = Files.list(ds)) {
            assertEquals(4, s.filter(p -> p.getFileName().toString().endsWith(".fsp")).count());
        }
        assertEquals(0, FanstoreProcess.run(work, Map.of(), 60, "verify", ds.toString()).status());
    }

    @Test
    void badNamesAreUsageErrorsNamingTheRule() throws Exception {
        for (String name : List.of("..", ".", "a/b", "", "x".repeat(256))) {
            Path ds = work.resolve("named.fs");
            FanstoreProcess.Result r = prep("--input", small.toString(), "--output", ds.toString(), "--name", name);
            assertEquals(2, r.status(), "--name '" + name + "': " + r.stderr());
            assertTrue(r.stderr().startsWith("fanstore prep: --name '" + name + "'") && r.stderr().contains(
                    "one directory under the mount") && r.stderr().strip().lines().count() == 1, r.stderr());
            assertFalse(Files.exists(ds), "nothing written for --name '" + name + "'");
        }
        Path ok = work.resolve("okname.fs");
        assertEquals(0, prep("--input", small.toString(), "--output", ok.toString(), "--name", "imagenet-1k.v2")
                .status());
    }

    @Test
    void sigintAndSigtermDuringPrepLeaveNothing() throws Exception {
        for (String signal : List.of("INT", "TERM")) {
            Path ds = work.resolve("interrupted-" + signal + ".fs");
            Process p = startPrep(ds);
            awaitTemporaryPartition(ds, p);
            signal(p, signal);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "prep still running after SIG" + signal);
            assertEquals(signal.equals("INT") ? 130 : 143, p.exitValue());
            assertEquals(List.of(), besides(ds), "SIG" + signal + " left something");
        }
    }

    @Test
    void aSigkilledPrepsLeftoverIsRemovedByTheNextPrepOfTheSameOutput() throws Exception {
        Path ds = work.resolve("killed.fs");
        Process p = startPrep(ds);
        awaitTemporaryPartition(ds, p);
        signal(p, "KILL");
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        List<String> left = besides(ds);
        assertEquals(1, left.size(), "SIGKILL leaves the temporary directory: " + left);
        assertTrue(left.get(0).startsWith("killed.fs.tmp-"), left.toString());
        FanstoreProcess.Result r = prep("--input", small.toString(), "--output", ds.toString());
        assertEquals(0, r.status(), r.stderr());
        assertTrue(r.stderr().contains("removed " + work.resolve(left.get(0)) + ", left by an interrupted prep"),
                r.stderr());
        assertEquals(List.of("killed.fs"), besides(ds));
    }

    private static Process startPrep(Path ds) throws IOException {
        return new ProcessBuilder(FanstoreProcess.repo().resolve("fanstore").toString(), "prep", "--input",
                large.toString(), "--output", ds.toString(), "--compress", "lz4hc", "--threads", "1",
                "--partitions", "4").redirectErrorStream(true).redirectOutput(work.resolve("prep.log").toFile())
                .start();
    }

    /** Waits until prep has written part of a partition into its temporary directory. */
    private static void awaitTemporaryPartition(Path ds, Process p) throws Exception {
        Path temp = ds.resolveSibling(ds.getFileName() + ".tmp-" + p.pid());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            assertTrue(p.isAlive(), "prep ended before it could be interrupted: " + Files.readString(work.resolve(
                    "prep.log")));
            if (Files.isDirectory(temp)) {
                try (Stream<Path> s = Files.list(temp)) {
                    if (s.anyMatch(f -> f.getFileName().toString().endsWith(".fsp"))) {
                        return;
                    }
                }
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no partition appeared in " + temp);
    }

    private static void signal(Process p, String signal) throws Exception {
        assertEquals(0, new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start().waitFor());
    }
}
