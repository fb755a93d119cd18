package org.fanstore.launcher.shim;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.fanstore.launcher.run.FanstoreProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The acceptance test of outputs that behave like a local file system: interpose-native/tests/e2e_outputs.py runs
 * real programs (h5py, sqlite in WAL mode, lmdb, tempfile, np.memmap, rsync, cp -a, subprocesses, the tmp +
 * os.replace checkpoint loop, links, fifos, sockets, xattrs...) on every rank of a real {@code fanstore run
 * --output-dir}, each rank under /fanstore/ds/out/r&lt;rank&gt;, and writes a manifest of its final tree outside the
 * mount. The job must pass every case, and the output directory must hold exactly each rank's final tree: the same
 * files byte for byte, modes, symlinks and empty directories, the cp -a mtimes, and nothing the job removed,
 * replaced or only used as a temporary.
 */
class OutputsLikeLocalFsTest {
    private static final String SCRIPT = "interpose-native/tests/e2e_outputs.py";

    @TempDir
    Path dir;

    @Test
    void oneRankWritesLikeOnALocalDisk() throws Exception {
        runAndCompare(1);
    }

    @Test
    void twoRanksWriteLikeOnALocalDiskAndReadEachOthersClosedFiles() throws Exception {
        runAndCompare(2);
    }

    private void runAndCompare(int ranks) throws Exception {
        Path src = Files.createDirectories(dir.resolve("src/d"));
        Files.writeString(src.getParent().resolve("a.txt"), "hello\n");
        Files.writeString(src.resolve("b.txt"), "x\n");
        Path data = dir.resolve("data.fs");
        assertEquals(0, FanstoreProcess.run(dir, Map.of(), 60, "prep", "--input", src.getParent().toString(),
                "--output", data.toString(), "--name", "ds").status(), "prep");
        Path side = Files.createDirectories(dir.resolve("side"));
        Path outDir = Files.createDirectories(dir.resolve("saved"));
        Path local = Files.createDirectories(dir.resolve("local"));
        String script = FanstoreProcess.repo().resolve(SCRIPT).toString();
        // a short job id keeps the local paths behind the mount short (a socket path has at most 107 bytes)
        String job = "ol" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
        FanstoreProcess.Result r = FanstoreProcess.run(dir, Map.of("FANSTORE_JOB_ID", job, "E2E_SIDE",
                side.toString()), 900, "run",
                "--ranks", Integer.toString(ranks), "--local-dir", local.toString(), "--output-dir",
                outDir.toString(), "--data", data.toString(), "--", "/usr/bin/python3", script, "ds");
        String all = r.stdout() + r.stderr();
        List<Executable> checks = new ArrayList<>();
        checks.add(() -> assertEquals(List.of(), all.lines().filter(l -> l.contains("FAIL ")).toList(),
                "failed cases; the whole output:\n" + all));
        checks.add(() -> assertEquals(0, r.status(), "exit status of fanstore run"));
        for (int k = 0; k < ranks; k++) {
            String head = "e2e_outputs rank " + k + ": ";
            checks.add(() -> assertTrue(all.lines().anyMatch(l -> l.startsWith(head) && l.endsWith(" 0 failed")),
                    head + "... 0 failed"));
        }
        Path saved = outDir.resolve("ds/out");
        checks.add(() -> assertEquals(IntStream.range(0, ranks).mapToObj(k -> "r" + k)
                .collect(Collectors.toCollection(TreeSet::new)), names(saved), "the output dir: one tree per rank"));
        for (int k = 0; k < ranks; k++) {
            int rank = k;
            Path tree = saved.resolve("r" + k);
            checks.add(() -> compare(rank, script, side.resolve("manifest-r" + rank + ".json"), tree));
            checks.add(() -> checkTree(tree));
        }
        // every check runs and reports, so one run shows both the failing cases and what the output dir got wrong
        assertAll(checks);
    }

    /** The job's view of its tree at the end (its manifest) and the output dir's tree, entry by entry. */
    private void compare(int rank, String script, Path jobManifest, Path tree) throws Exception {
        assertTrue(Files.isRegularFile(jobManifest), "rank " + rank + " wrote no manifest");
        Path savedManifest = dir.resolve("saved-manifest-r" + rank + ".json");
        Process p = new ProcessBuilder("/usr/bin/python3", script, "--manifest", tree.toString(),
                savedManifest.toString()).redirectErrorStream(true).start();
        String pout = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0, "manifest of " + tree + ": " + pout);
        List<String> job = Files.readAllLines(jobManifest);
        List<String> saved = Files.readAllLines(savedManifest);
        List<String> missing = new ArrayList<>(job);
        missing.removeAll(saved);
        List<String> extra = new ArrayList<>(saved);
        extra.removeAll(job);
        assertTrue(missing.isEmpty() && extra.isEmpty(), "rank " + rank + ": the output dir differs from the job's "
                + "final tree\n  in the job only (or different):\n    " + String.join("\n    ", missing)
                + "\n  in the output dir only (or different):\n    " + String.join("\n    ", extra));
    }

    /** Checks of the saved tree that do not trust the job's own view. */
    private static void checkTree(Path tree) throws Exception {
        for (String gone : List.of("ckpt/ckpt.tmp", "rm/tree", "mv/new", "sock/s")) {
            assertFalse(Files.exists(tree.resolve(gone), LinkOption.NOFOLLOW_LINKS), gone + " was removed or replaced");
        }
        try (Stream<Path> s = Files.walk(tree)) {
            assertEquals(List.of(), s.filter(p -> p.getFileName().toString().startsWith("e2etmp-")).toList(),
                    "temporary files left");
        }
        assertEquals(List.of("ckpt.pt"), List.copyOf(names(tree.resolve("ckpt"))));
        assertEquals(List.of(), List.copyOf(names(tree.resolve("empty"))), "the empty directory");
        assertEquals(List.of(), List.copyOf(names(tree.resolve("tempfile"))), "TemporaryFile and mkstemp + unlink");
        assertEquals(List.of(), List.copyOf(names(tree.resolve("rm"))), "rm -r");
        assertEquals(256 << 10, Files.size(tree.resolve("ckpt/ckpt.pt")));
        assertEquals("rw-rw-r--", perms(tree.resolve("umask/f")), "umask 002");
        assertEquals("rwxrwxr-x", perms(tree.resolve("umask/dir")), "umask 002");
        for (String copy : List.of("cp", "rsync")) {
            Path c = tree.resolve(copy);
            assertEquals("rw-------", perms(c.resolve("secret.txt")), copy);
            assertEquals("rwxr-xr-x", perms(c.resolve("run.sh")), copy);
            assertEquals("rwxr-x---", perms(c.resolve("sub")), copy);
            assertEquals(Path.of("sub/data.bin"), Files.readSymbolicLink(c.resolve("link")), copy);
        }
        // cp -a keeps mtimes (e2e_outputs.py source_tree() sets them to whole seconds from 1600001000 on)
        String[] files = {"secret.txt", "run.sh", "sub/data.bin", "sub/deeper/z.txt"};
        for (int i = 0; i < files.length; i++) {
            assertEquals(1600000000L + 1000L * (i + 1), Files.getLastModifiedTime(tree.resolve("cp").resolve(
                    files[i]), LinkOption.NOFOLLOW_LINKS).toMillis() / 1000, "mtime of cp/" + files[i]);
        }
    }

    private static String perms(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }

    private static TreeSet<String> names(Path d) throws Exception {
        try (Stream<Path> s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        }
    }
}
