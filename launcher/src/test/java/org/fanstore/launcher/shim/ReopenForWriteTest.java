package org.fanstore.launcher.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.fanstore.launcher.run.FanstoreProcess;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The files handed to readers cannot be changed through /proc/self/fd/N (issue 10, item 10): an unmodified
 * python3 under the shim on rank 0 of a 2-rank job opens every file (its own partitions unpacked on local disk
 * or decompressed into the cache, rank 1's fetched into the cache), tries to reopen it for writing under
 * /proc/self/fd/N, /dev/fd/N and /proc/PID/fd/N and to truncate it there, and a second process then reads every
 * file back. Tests run as root, which no mode bit stops: the shim's refusal (EROFS) is what holds here.
 */
class ReopenForWriteTest {
    private static final int ALIASES = 3;
    /** Four write opens and a truncate per alias. */
    private static final int CHECKS_PER_ALIAS = 5;

    @TempDir
    static Path work;

    static final Map<String, String> expected = new TreeMap<>();
    static Path script;

    @BeforeAll
    static void prepare() throws Exception {
        Random rnd = new Random(10);
        for (int i = 0; i < 12; i++) {
            byte[] body = new byte[1000 + 37_000 * i];
            if (i % 2 == 0) {
                rnd.nextBytes(body);
            } else {
                java.util.Arrays.fill(body, (byte) ('a' + i));
            }
            String rel = "d" + (i % 3) + "/f" + i + ".bin";
            Path f = work.resolve("src/ds").resolve(rel);
            Files.createDirectories(f.getParent());
            Files.write(f, body);
            expected.put("ds/" + rel, HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body))
                    + " " + body.length);
        }
        script = work.resolve("reopen_for_write.py");
        try (InputStream in = ReopenForWriteTest.class.getResourceAsStream("reopen_for_write.py")) {
            Files.write(script, in.readAllBytes());
        }
        for (String compress : List.of("none", "lz4")) {
            Process p = new ProcessBuilder(FanstoreProcess.repo().resolve("fanstore").toString(), "prep",
                    "--input", work.resolve("src/ds").toString(), "--output", work.resolve(compress + ".fs").toString(),
                    "--partitions", "4", "--compress", compress).inheritIO().start();
            assertTrue(p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0, "prep " + compress);
        }
    }

    @ParameterizedTest(name = "compress {0}: local files {1}, the rest fetched from rank 1")
    @CsvSource({"none, unpacked on local disk", "lz4, decompressed into the cache"})
    void writesThroughProcFdAreRefusedWithErofsAndLaterReadersGetTheOriginalBytes(String compress, String how)
            throws Exception {
        Path out = work.resolve("out-" + compress + ".txt");
        Path err = work.resolve("err-" + compress + ".txt");
        Process p = new ProcessBuilder(FanstoreProcess.repo().resolve("fanstore").toString(), "run", "--ranks", "2",
                "--only-rank", "0", "--unpack", "eager", "--prefetch", "off", "--local-dir", work.toString(),
                "--data", work.resolve(compress + ".fs").toString(), "--", "sh", "-c",
                "python3 " + script + " attack && python3 " + script + " read")
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        boolean done = p.waitFor(240, TimeUnit.SECONDS);
        if (!done) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        String stdout = Files.readString(out);
        String report = stdout + "\nstderr:\n" + Files.readString(err);
        assertTrue(done && p.exitValue() == 0, report);

        assertTrue(stdout.lines().noneMatch(l -> l.startsWith("WRITABLE")), report);
        long refused = stdout.lines().filter(l -> l.startsWith("REFUSED ")).count();
        assertEquals((long) expected.size() * ALIASES * CHECKS_PER_ALIAS, refused, report);
        assertTrue(stdout.lines().filter(l -> l.startsWith("REFUSED ")).allMatch(l -> l.endsWith(" EROFS")), report);
        // For users other than root the backing files' mode is a second wall: no write bit anywhere.
        Map<String, String> modes = new TreeMap<>();
        stdout.lines().filter(l -> l.startsWith("MODE ")).forEach(l -> modes.put(l.split(" ")[1], l.split(" ")[2]));
        assertEquals(expected.keySet(), modes.keySet(), report);
        assertTrue(modes.values().stream().allMatch("444"::equals), () -> "backing file modes " + modes);

        Map<String, String> read = new TreeMap<>();
        stdout.lines().filter(l -> l.startsWith("HASH ")).map(l -> l.split(" ", 3))
                .forEach(f -> read.put(f[1], f[2]));
        assertEquals(expected, read, report);
    }
}
