package org.fanstore.launcher.badinput;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.fanstore.launcher.run.FanstoreProcess;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35: a partition that is not a regular file. A symlink to /dev/zero used to be copied until the local
 * disk was full and made verify run forever; a FIFO hung verify and run in the open. Each is now refused at
 * once by the real {@code fanstore} commands (stat before any open), naming the file; the time limit here is
 * the JVM's start plus slack on a shared 2-core machine, not minutes. A symlink to a regular partition stays
 * allowed.
 */
class HostileDatasetTest {
    /** A refusal must not read anything: the commands end in about a JVM start (measured: under 1 s). */
    private static final long REFUSED_WITHIN_MILLIS = 8_000;

    @TempDir
    static Path work;
    static Path good;

    @BeforeAll
    static void prepare() throws Exception {
        Path src = Files.createDirectories(work.resolve("src/d"));
        for (int i = 0; i < 6; i++) {
            Files.writeString(src.resolve("f" + i + ".txt"), ("file " + i + "\n").repeat(100 + i));
        }
        good = work.resolve("good.fs");
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of(), 120, "prep", "--input",
                work.resolve("src").toString(), "--output", good.toString(), "--partitions", "2");
        assertEquals(0, r.status(), r.stderr());
    }

    /** A copy of the good dataset whose part-00001.fsp is replaced by what {@code plant} makes there. */
    private static Path withPartition(String name, Planter plant) throws Exception {
        Path ds = Files.createDirectories(work.resolve(name));
        try (Stream<Path> files = Files.list(good)) {
            for (Path f : files.toList()) {
                Files.copy(f, ds.resolve(f.getFileName()));
            }
        }
        Path part = ds.resolve("part-00001.fsp");
        Files.delete(part);
        plant.at(part);
        return ds;
    }

    private interface Planter {
        void at(Path partition) throws Exception;
    }

    private static void mkfifo(Path p) throws Exception {
        assertEquals(0, new ProcessBuilder("mkfifo", p.toString()).inheritIO().start().waitFor());
    }

    private static FanstoreProcess.Result refused(String what, String kind, String... args) throws Exception {
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of(), 60, args);
        String all = r.stdout() + r.stderr();
        System.out.println(what + ": " + args[0] + " refused in " + r.millis() + " ms: " + all.strip());
        assertEquals(1, r.status(), what + ": " + all);
        assertTrue(all.contains("part-00001.fsp") && all.contains(kind) && all.contains("not a regular file"),
                what + " must be named with its kind: " + all);
        assertTrue(r.millis() < REFUSED_WITHIN_MILLIS, what + ": took " + r.millis() + " ms");
        assertFalse(all.contains("Exception") || all.contains("\tat "), "no Java class name: " + all);
        return r;
    }

    @Test
    void aSymlinkToDevZeroIsRefusedAtOnceByVerifyRunAndLs() throws Exception {
        Path ds = withPartition("zero.fs", p -> Files.createSymbolicLink(p, Path.of("/dev/zero")));
        refused("/dev/zero", "character device", "verify", ds.toString());
        refused("/dev/zero", "character device", "run", "--data", ds.toString(), "--ranks", "1", "--", "true");
        refused("/dev/zero", "character device", "ls", "-R", ds.toString());
    }

    @Test
    void aFifoPartitionIsRefusedBeforeAnyOpenByVerifyRunAndCat() throws Exception {
        Path ds = withPartition("fifo.fs", HostileDatasetTest::mkfifo);
        refused("FIFO", "FIFO", "verify", ds.toString());
        refused("FIFO", "FIFO", "run", "--data", ds.toString(), "--ranks", "2", "--", "true");
        refused("FIFO", "FIFO", "cat", ds.toString(), "d/f0.txt");
        assertTrue(Files.exists(ds.resolve("part-00001.fsp")), "the FIFO is the user's: left as it was");
    }

    @Test
    void aDirectoryInPlaceOfAPartitionIsRefusedNamingIt() throws Exception {
        Path ds = withPartition("dir.fs", Files::createDirectory);
        refused("directory", "a directory", "verify", ds.toString());
    }

    @Test
    void aSymlinkToARegularPartitionStaysAllowed() throws Exception {
        Path elsewhere = Files.createDirectories(work.resolve("elsewhere"));
        Files.copy(good.resolve("part-00001.fsp"), elsewhere.resolve("p1"));
        Path ds = withPartition("linked.fs", p -> Files.createSymbolicLink(p, elsewhere.resolve("p1")));
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of(), 60, "verify", ds.toString());
        assertEquals(0, r.status(), r.stdout() + r.stderr());
        assertTrue(r.stdout().contains("verify: OK"), r.stdout());
    }
}
