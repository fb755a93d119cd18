package org.fanstore.runtime.output;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The drain on real files: what lands in the output directory, what is reported, what a crash leaves. */
class DirectoryDrainTest {
    @TempDir
    Path staging;
    @TempDir
    Path out;

    private final MapStaging files = new MapStaging();
    private long nextId = OutputObjects.FIRST;

    @Test
    @Timeout(60)
    void copiesAreByteIdenticalAndRenamesAndUnlinksAreMirrored() throws Exception {
        DirectoryDrain drain = new DirectoryDrain(out, 0, 1);
        OutputApplier applier = new OutputApplier(new MapOutputNamespace(Set.of()), files, drain, 0);
        byte[] a = random(3 * (1 << 20) + 17, 1);
        byte[] model = random(1 << 20, 2);
        byte[] empty = new byte[0];
        applier.apply(MapOutputNamespace.dir("ckpt"));
        commit(applier, "a.bin", a);
        commit(applier, "empty", empty);
        long tmpId = commit(applier, "ckpt/.tmp-123", model);
        applier.apply(MapOutputNamespace.rename("ckpt/.tmp-123", "ckpt/model.pt", 0, tmpId));
        commit(applier, "junk.txt", random(100, 3));
        applier.apply(MapOutputNamespace.unlink("junk.txt"));

        DirectoryDrain.Report report = drain.finish(Duration.ofSeconds(30));

        assertEquals(0, report.failed().size(), () -> "failed: " + report.failed());
        assertArrayEquals(a, Files.readAllBytes(out.resolve("a.bin")));
        assertArrayEquals(empty, Files.readAllBytes(out.resolve("empty")));
        assertArrayEquals(model, Files.readAllBytes(out.resolve("ckpt/model.pt")));
        assertFalse(Files.exists(out.resolve("ckpt/.tmp-123")), "the renamed source is gone");
        assertFalse(Files.exists(out.resolve("junk.txt")), "the unlinked file is gone");
        assertEquals(List.of("a.bin", "ckpt", "ckpt/model.pt", "empty"), tree(out), "no partial names left over");
        assertEquals(4, report.copiedFiles());
    }

    @Test
    @Timeout(60)
    void aFailingCopyIsReportedByNameInWordsAndOthersStillLand() throws Exception {
        Files.writeString(out.resolve("blocked"), "a file where the drain needs a directory");
        DirectoryDrain drain = new DirectoryDrain(out, 0, 1);
        OutputApplier applier = new OutputApplier(new MapOutputNamespace(Set.of()), files, drain, 0);
        applier.apply(MapOutputNamespace.dir("blocked"));
        commit(applier, "blocked/x.bin", random(1000, 4));
        byte[] fine = random(5000, 5);
        commit(applier, "fine.bin", fine);

        DirectoryDrain.Report report = drain.finish(Duration.ofSeconds(30));

        assertEquals(Set.of("blocked/x.bin"), report.failed().keySet());
        String why = report.failed().get("blocked/x.bin");
        assertTrue(why.contains(out.resolve("blocked").toString()), why);
        assertFalse(why.contains("Exception") || why.contains("java."), "no Java class names: " + why);
        assertArrayEquals(fine, Files.readAllBytes(out.resolve("fine.bin")));
    }

    @Test
    @Timeout(60)
    void aFileReplacedByAnotherRanksCommitIsNotReportedAndOnlyTheUnlinkOfOwnFilesTouchesTheDirectory()
            throws Exception {
        DirectoryDrain drain = new DirectoryDrain(out, 0, 1);
        MapOutputNamespace ns = new MapOutputNamespace(Set.of());
        OutputApplier applier = new OutputApplier(ns, files, drain, 0);
        long id = nextId++;
        applier.apply(MapOutputNamespace.file("shared.pt", 10, 0, id, false)); // no staging file: would fail
        applier.apply(MapOutputNamespace.file("shared.pt", 20, 1, OutputObjects.FIRST + 999, false));
        DirectoryDrain.Report report = drain.finish(Duration.ofSeconds(30));
        assertEquals(Set.of(), report.failed().keySet(), "rank 1's newer file owns the name: " + report.failed());
        assertEquals(List.of(), tree(out));
    }

    @Test
    @Timeout(90)
    void aCrashMidCopyNeverLeavesAPartialFileUnderTheFinalName() throws Exception {
        Path big = staging.resolve("big");
        byte[] block = random(1 << 20, 6);
        try (var o = Files.newOutputStream(big)) {
            for (int i = 0; i < 384; i++) {
                o.write(block);
            }
        }
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-cp", System.getProperty("java.class.path") + File.pathSeparator,
                DrainCrashMain.class.getName(), big.toString(), out.toString(), "ckpt.bin")
                .redirectErrorStream(true).redirectOutput(staging.resolve("child.log").toFile()).start();
        try {
            boolean sawPartial = false;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!sawPartial && p.isAlive() && System.nanoTime() < deadline) {
                sawPartial = tree(out).stream().anyMatch(n -> n.contains(".fanstore-partial-"));
                Thread.sleep(2);
            }
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            assertTrue(sawPartial, "the copy was never caught in progress: " + Files.readString(
                    staging.resolve("child.log")));
            assertFalse(Files.exists(out.resolve("ckpt.bin")), "killed mid-copy: the final name must not exist");
        } finally {
            p.destroyForcibly();
        }
        // A later drain of the same file still ends with the whole file under the final name.
        DirectoryDrain again = new DirectoryDrain(out, 0, 1);
        files.put(OutputObjects.FIRST, big);
        new OutputApplier(new MapOutputNamespace(Set.of()), files, again, 0)
                .apply(MapOutputNamespace.file("ckpt.bin", Files.size(big), 0, OutputObjects.FIRST, false));
        assertEquals(Set.of(), again.finish(Duration.ofSeconds(60)).failed().keySet());
        assertEquals(Files.size(big), Files.size(out.resolve("ckpt.bin")));
        assertEquals(-1L, Files.mismatch(big, out.resolve("ckpt.bin")));
    }

    private long commit(OutputApplier applier, String key, byte[] content) throws IOException {
        long id = nextId++;
        Path f = staging.resolve("obj-" + id);
        Files.write(f, content);
        files.put(id, f);
        applier.apply(MapOutputNamespace.file(key, content.length, 0, id, false));
        return id;
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static List<String> tree(Path root) throws IOException {
        List<String> names = new ArrayList<>();
        try (Stream<Path> s = Files.walk(root)) {
            s.filter(p -> !p.equals(root)).forEach(p -> names.add(root.relativize(p).toString()));
        } catch (java.io.UncheckedIOException raced) {
            return tree(root);
        }
        names.sort(null);
        return names;
    }
}
