package org.fanstore.launcher.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.fanstore.launcher.run.FanstoreProcess;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Races between the write path and the drain, hunted on purpose: interpose-native/tests/e2e_output_stress.py runs on
 * every rank of a real {@code fanstore run --output-dir}, forked processes with threads creating, replacing,
 * renaming over, linking, chmod-ing, truncating and deleting outputs in random order while reader threads (of every
 * rank) check every byte of whole-written files, and the drain copies as files close. Then the output directory
 * must equal each rank's final tree exactly (content, modes, symlinks, empty directories, nothing extra, no partial
 * names). Rounds: {@code -Dfanstore.stressRounds} (default 1), each with a new seed.
 */
class OutputStressTest {
    private static final Pattern LINE = Pattern.compile("\"([^\"]+)\": \\{([^}]*)\\}");

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void outputDirEqualsTheFinalTreeAfterRandomConcurrentChanges(int ranks) throws Exception {
        int rounds = Integer.getInteger("fanstore.stressRounds", 1);
        for (int round = 0; round < rounds; round++) {
            Path dir = Files.createTempDirectory("outstress");
            try {
                oneRound(dir, ranks, (int)(System.nanoTime() % 100000));
            } finally {
                deleteTree(dir);
            }
        }
    }

    private static void oneRound(Path dir, int ranks, int seed) throws Exception {
        Path data = ClusterWritesTest.oneFileDataset(dir);
        Path manifests = Files.createDirectories(dir.resolve("manifests"));
        Path outDir = Files.createDirectories(dir.resolve("saved"));
        FanstoreProcess.Result r = FanstoreProcess.run(dir, Map.of("FANSTORE_JOB_ID", "os" + System.nanoTime()),
                600, "run", "--ranks", String.valueOf(ranks), "--local-dir",
                Files.createDirectories(dir.resolve("local")).toString(), "--output-dir", outDir.toString(),
                "--data", data.toString(), "--", "/usr/bin/python3",
                FanstoreProcess.repo().resolve("interpose-native/tests/e2e_output_stress.py").toString(), "ds",
                manifests.toString(), String.valueOf(seed));
        String all = r.stdout() + r.stderr();
        assertEquals(0, r.status(), "seed " + seed + ":\n" + all);
        for (int rank = 0; rank < ranks; rank++) {
            assertTrue(all.contains("stress rank " + rank + ": "), all);
            Map<String, String> expected = parse(Files.readString(manifests.resolve("rank-" + rank + ".json")));
            Map<String, String> actual = tree(outDir.resolve("ds/stress/r" + rank));
            assertEquals("", difference(expected, actual), "seed " + seed + ", rank " + rank
                    + ": output dir != the job's final tree\n" + all);
            assertTrue(expected.size() > 3 * ranks, "the round left too little to compare: " + expected);
        }
    }

    /** What differs, one line per path ("" when equal). */
    private static String difference(Map<String, String> expected, Map<String, String> actual) {
        StringBuilder b = new StringBuilder();
        Set<String> keys = new java.util.TreeSet<>(expected.keySet());
        keys.addAll(actual.keySet());
        for (String k : keys) {
            if (!java.util.Objects.equals(expected.get(k), actual.get(k))) {
                b.append(k).append(": job ").append(expected.get(k)).append(", output dir ").append(actual.get(k))
                        .append('\n');
            }
        }
        return b.toString();
    }

    /** The script's manifest as path -> canonical description. */
    private static Map<String, String> parse(String json) {
        Map<String, String> out = new TreeMap<>();
        Matcher m = LINE.matcher(json);
        while (m.find()) {
            Map<String, String> fields = new TreeMap<>();
            for (String part : m.group(2).split(",")) {
                String[] kv = part.trim().split(":\\s*", 2);
                fields.put(kv[0].replace("\"", "").trim(), kv[1].replace("\"", "").trim());
            }
            out.put(m.group(1), describe(fields.get("kind"), fields.get("mode"), fields.get("size"),
                    fields.get("sha256"), fields.get("target")));
        }
        return out;
    }

    private static String describe(String kind, String mode, String size, String sha, String target) {
        return switch (kind) {
            case "link" -> "link " + target;
            case "dir" -> "dir " + mode;
            default -> "file " + mode + " " + size + " " + sha;
        };
    }

    private static Map<String, String> tree(Path root) throws IOException, NoSuchAlgorithmException {
        Map<String, String> out = new TreeMap<>();
        if (!Files.isDirectory(root)) {
            return out;
        }
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : (Iterable<Path>)s.skip(1)::iterator) {
                String rel = root.relativize(p).toString();
                if (Files.isSymbolicLink(p)) {
                    out.put(rel, describe("link", null, null, null, Files.readSymbolicLink(p).toString()));
                } else if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    out.put(rel, describe("dir", String.valueOf(mode(p)), null, null, null));
                } else {
                    byte[] b = Files.readAllBytes(p);
                    String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
                    out.put(rel, describe("file", String.valueOf(mode(p)), String.valueOf(b.length), sha, null));
                }
            }
        }
        return out;
    }

    private static int mode(Path p) throws IOException {
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
        int mode = 0;
        for (PosixFilePermission x : perms) {
            mode |= 0400 >> x.ordinal();
        }
        return mode;
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
        }
    }
}
