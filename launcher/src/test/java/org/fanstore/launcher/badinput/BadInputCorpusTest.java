package org.fanstore.launcher.badinput;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.fanstore.launcher.Main;
import org.fanstore.launcher.run.FanstoreProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 10, bad inputs: every damaged dataset of tests/bad-inputs/ is refused by `fanstore verify` with its
 * expected status and message, and `ls -R`/`cat` on it end cleanly (no internal error, no stack trace), leaving
 * the dataset exactly as it was. A few also go through `fanstore run`.
 */
class BadInputCorpusTest {
    @TempDir
    static Path work;

    static Path corpus() {
        return FanstoreProcess.repo().resolve("tests/bad-inputs");
    }

    static Stream<BadInputCorpus.Case> cases() throws IOException {
        List<BadInputCorpus.Case> out = new ArrayList<>();
        for (String line : Files.readAllLines(corpus().resolve("datasets.expect"))) {
            if (!line.startsWith("#")) {
                String[] f = line.split("\\|", 3);
                out.add(new BadInputCorpus.Case(f[0], Integer.parseInt(f[1]), f[2]));
            }
        }
        return out.stream();
    }

    private record Run(int code, String out, String err) {}

    private static Run fanstore(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.execute(args, out, new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void theCorpusIsLargeAndTheGeneratorReproducesIt() throws IOException {
        assertTrue(cases().count() >= 100, "fewer than 100 bad inputs");
        Path fresh = work.resolve("fresh");
        BadInputCorpus.generate(fresh);
        Map<String, String> committed = snapshot(corpus());
        committed.remove("README.md");
        Map<String, String> generated = snapshot(fresh);
        List<String> differ = new ArrayList<>();
        for (String k : new java.util.TreeSet<>(java.util.Set.copyOf(committed.keySet()))) {
            if (!committed.get(k).equals(generated.get(k))) {
                differ.add(k);
            }
        }
        generated.keySet().stream().filter(k -> !committed.containsKey(k)).forEach(differ::add);
        assertEquals(List.of(), differ, "tests/bad-inputs differs from what BadInputCorpus writes: regenerate it"
                + " (see tests/bad-inputs/README.md)");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void isRefusedCleanly(BadInputCorpus.Case c) throws IOException {
        Path dir = corpus().resolve("datasets").resolve(c.name());
        Map<String, String> before = snapshot(dir);
        Run verify = fanstore("verify", dir.toString());
        String all = verify.out() + verify.err();
        assertEquals(c.exit(), verify.code(), all);
        assertTrue(all.contains(c.fragment()), "'" + c.fragment() + "' not in: " + all);
        clean(all);
        Run ls = fanstore("ls", "-R", dir.toString());
        assertTrue(ls.code() <= 2, ls.err());
        clean(ls.err());
        for (String path : new String[] {"data/hello.txt", "data/pattern.txt", "link", "data/nested/deep/leaf.txt"}) {
            Run cat = fanstore("cat", dir.toString(), path);
            clean(cat.err());
            if (cat.code() != 0) {
                assertEquals("", cat.out(), "cat wrote bytes and then failed: " + cat.err());
                assertEquals(1, cat.err().lines().count(), cat.err());
            }
        }
        assertEquals(before, snapshot(dir), "the dataset changed or something was left in it");
    }

    @ParameterizedTest(name = "run: {0}")
    @MethodSource("runCases")
    void runRefusesItNamingTheProblem(String name, String fragment) throws Exception {
        Path dir = corpus().resolve("datasets").resolve(name);
        String job = "tbad" + System.nanoTime();
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of("FANSTORE_JOB_ID", job), 120, "run", "--ranks",
                "1", "--data", dir.toString(), "--local-dir", work.toString(), "--", "true");
        assertTrue(r.status() != 0, r.stderr());
        assertTrue(r.stderr().contains(fragment), r.stderr());
        clean(r.stderr());
        try (Stream<Path> left = Files.list(work)) {
            assertFalse(left.anyMatch(p -> p.getFileName().toString().startsWith("fanstore-")
                    && p.toString().contains(job)), "local directory left behind");
        }
        assertFalse(Files.exists(Path.of("/dev/shm").resolve("fanstore-" + uid() + "-" + job)));
    }

    static Stream<org.junit.jupiter.params.provider.Arguments> runCases() {
        return Stream.of(
                org.junit.jupiter.params.provider.Arguments.of("truncated-4150", "damaged"),
                org.junit.jupiter.params.provider.Arguments.of("truncated-forged-4150", "part-00000.fsp"),
                org.junit.jupiter.params.provider.Arguments.of("bad-magic", "bad magic"),
                org.junit.jupiter.params.provider.Arguments.of("manifest-files-huge", "9223372036854775807 files"),
                org.junit.jupiter.params.provider.Arguments.of("manifest-partition-entries-wrong", "99 entries"));
    }

    private static String uid() throws IOException {
        return Files.getAttribute(Path.of("/proc/self"), "unix:uid").toString();
    }

    private static void clean(String text) {
        assertFalse(text.contains("internal error") || text.contains("Exception") || text.contains("\tat "),
                "not a clean refusal: " + text);
    }

    private static Map<String, String> snapshot(Path root) throws IOException {
        Map<String, String> out = new TreeMap<>();
        try (Stream<Path> all = Files.walk(root)) {
            for (Path p : (Iterable<Path>) all::iterator) {
                String rel = root.relativize(p).toString();
                out.put(rel, Files.isDirectory(p) ? "dir" : java.util.HexFormat.of().formatHex(
                        java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p))));
            }
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }
}
