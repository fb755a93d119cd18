package org.fanstore.launcher.shim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.fanstore.launcher.run.FanstoreProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writes across two ranks through a real {@code fanstore run --ranks 2 --output-dir}: real Python (torch, numpy,
 * tempfile, shutil) on both ranks (interpose-native/tests/e2e_cluster_writes.py plays both sides), then the
 * output directory must hold exactly the job's final files, byte for byte: what the killed writer wrote, and
 * nothing of the temporary checkpoint name.
 */
class ClusterWritesTest {
    @TempDir
    Path dir;

    /** Dataset "ds" in dir/data.fs: one input, a.txt ("an input\n"); the output tests write beside it. */
    static Path oneFileDataset(Path dir) throws Exception {
        Path src = Files.createDirectories(dir.resolve("src"));
        Files.writeString(src.resolve("a.txt"), "an input\n");
        Path data = dir.resolve("data.fs");
        assertEquals(0, FanstoreProcess.run(dir, Map.of(), 60, "prep", "--input", src.toString(), "--output",
                data.toString(), "--name", "ds").status());
        return data;
    }

    /**
     * Runs interpose-native/tests/SCRIPT on 2 ranks of a job over {@link #oneFileDataset}, with {@code dir/sync} (made
     * here) as its first argument, then {@code args}, and {@code dir/saved} (made here) as the output directory.
     */
    static FanstoreProcess.Result twoRankScript(Path dir, String script, String... args) throws Exception {
        Path data = oneFileDataset(dir);
        Path sync = Files.createDirectories(dir.resolve("sync"));
        Path saved = Files.createDirectories(dir.resolve("saved"));
        List<String> command = new java.util.ArrayList<>(List.of("run", "--ranks", "2", "--output-dir",
                saved.toString(), "--data", data.toString(), "--", "/usr/bin/python3",
                FanstoreProcess.repo().resolve("interpose-native/tests/" + script).toString(), sync.toString()));
        command.addAll(List.of(args));
        return FanstoreProcess.run(dir, Map.of("FANSTORE_JOB_ID", "script" + System.nanoTime()), 180,
                command.toArray(String[]::new));
    }

    @Test
    void outputsWrittenOnOneRankAreVisibleOnTheOtherAtCloseAndSavedToTheOutputDir() throws Exception {
        Path data = oneFileDataset(dir);
        Path sync = Files.createDirectories(dir.resolve("sync"));
        Path outDir = Files.createDirectories(dir.resolve("saved"));
        Path local = Files.createDirectories(dir.resolve("local"));
        FanstoreProcess.Result r = FanstoreProcess.run(dir, Map.of("FANSTORE_JOB_ID", "cw" + System.nanoTime()),
                180, "run", "--ranks", "2", "--local-dir", local.toString(), "--output-dir", outDir.toString(),
                "--data", data.toString(), "--", "/usr/bin/python3",
                FanstoreProcess.repo().resolve("interpose-native/tests/e2e_cluster_writes.py").toString(), "ds",
                sync.toString());
        String all = r.stdout() + r.stderr();
        assertEquals(0, r.status(), all);
        assertEquals(2, all.split(" passed, 0 failed", -1).length - 1, all);

        Path saved = outDir.resolve("ds/out");
        Map<String, Long> names = new HashMap<>();
        try (Stream<Path> s = Files.list(saved)) {
            s.forEach(p -> names.put(p.getFileName().toString(), p.toFile().length()));
        }
        assertEquals(List.of("a.bin", "arr.npy", "ckpt.pt", "copy.txt", "excl", "killed.bin"),
                names.keySet().stream().sorted().toList(), "output dir holds exactly the job's final files");
        byte[] unit = MessageDigest.getInstance("SHA-256").digest("fanstore".getBytes());
        byte[] expected = new byte[unit.length * 40000];
        for (int i = 0; i < 40000; i++) {
            System.arraycopy(unit, 0, expected, i * unit.length, unit.length);
        }
        assertArrayEquals(expected, Files.readAllBytes(saved.resolve("a.bin")));
        assertEquals("an input\n", Files.readString(saved.resolve("copy.txt")));
        assertEquals("first", Files.readString(saved.resolve("excl")));
        assertEquals(Files.readString(sync.resolve("ckpt.sha256")), HexFormat.of().formatHex(
                MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(saved.resolve("ckpt.pt")))),
                "the saved checkpoint is byte-identical to what torch.save produced");
        assertEquals("half".repeat(100000), Files.readString(saved.resolve("killed.bin")));
        try (Stream<Path> s = Files.list(local)) {
            assertEquals(List.of(), s.toList(), "local dir left behind");
        }
    }
}
