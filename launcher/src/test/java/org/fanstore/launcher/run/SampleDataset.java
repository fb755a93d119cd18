package org.fanstore.launcher.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * A small prepared dataset for launcher tests that run real programs: random files in a few directories,
 * prepped into LZ4 partitions, with each file's SHA-256 as computed here, and the shell command that makes
 * {@code sha256sum} read every file through the shim, so a test compares what a real program read.
 */
record SampleDataset(Path data, String name, Map<String, String> sha256) {

    static SampleDataset make(Path work, String name, int files, long seed) throws Exception {
        Path src = work.resolve("src").resolve(name);
        Random rnd = new Random(seed);
        Map<String, String> sums = new TreeMap<>();
        for (int i = 0; i < files; i++) {
            byte[] body = new byte[1 + rnd.nextInt(150_000)];
            rnd.nextBytes(body);
            String rel = "d" + (i % 3) + "/f" + i + ".bin";
            Path f = src.resolve(rel);
            Files.createDirectories(f.getParent());
            Files.write(f, body);
            sums.put(rel, sha256(body));
        }
        Path data = work.resolve(name + ".fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", src.toString(), "--output",
                data.toString(), "--partitions", "4", "--compress", "lz4"));
        return new SampleDataset(data, name, sums);
    }

    /** A shell command that prints the job id, then {@code HASH  /fanstore/NAME/REL} for every file. */
    String readEverything() {
        StringBuilder cmd = new StringBuilder("echo \"JOB $FANSTORE_JOB_ID\"; sha256sum");
        for (String rel : sha256.keySet()) {
            cmd.append(" /fanstore/").append(name).append('/').append(rel);
        }
        return cmd.toString();
    }

    /** How many tasks printed the right hash for every file (and none a wrong one); -1 when any was wrong. */
    int tasksThatReadEverything(String stdout) {
        Map<String, Integer> right = new TreeMap<>();
        for (String line : stdout.split("\n")) {
            String[] f = line.split(" +", 2);
            String prefix = "/fanstore/" + name + "/";
            if (f.length == 2 && f[1].startsWith(prefix)) {
                String rel = f[1].substring(prefix.length());
                if (!f[0].equals(sha256.get(rel))) {
                    return -1;
                }
                right.merge(rel, 1, Integer::sum);
            }
        }
        return right.size() == sha256.size() ? right.values().stream().min(Integer::compare).orElse(0) : 0;
    }

    /** The job ids the tasks printed (one line each). */
    static java.util.Set<String> jobIds(String stdout) {
        java.util.Set<String> ids = new java.util.TreeSet<>();
        for (String line : stdout.split("\n")) {
            if (line.startsWith("JOB ")) {
                ids.add(line.substring(4).strip());
            }
        }
        return ids;
    }

    /** True when neither the shared memory nor the local directory of {@code jobId} is left. */
    static boolean nothingLeft(Path localBase, String jobId) throws IOException {
        return !Files.exists(JobLayout.sharedMemoryView(jobId).shmRoot())
                && !Files.exists(org.fanstore.runtime.layout.RankDirectory.JOB_ROOT.in(localBase,
                        JobLayout.currentUid(), jobId));
    }

    /** CSV-like rows of {@code size} bytes, the same for the same size: LZ4 halves them, as it does real text. */
    static byte[] compressibleText(int size) {
        Random rnd = new Random(size);
        StringBuilder sb = new StringBuilder(size + 64);
        while (sb.length() < size) {
            sb.append("2026-11-").append(10 + rnd.nextInt(20)).append(",n").append(rnd.nextInt(100))
                    .append(rnd.nextBoolean() ? ",train," : ",val,").append(rnd.nextInt(1000)).append('\n');
        }
        return sb.substring(0, size).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }

    private static String sha256(byte[] body) throws NoSuchAlgorithmException {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body));
    }
}
