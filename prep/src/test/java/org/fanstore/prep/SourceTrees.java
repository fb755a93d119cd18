package org.fanstore.prep;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/** Builds the awkward input trees the prep tests pack. */
final class SourceTrees {
    /** Name of a file whose name holds byte 0xFF (not UTF-8). */
    static final byte[] NON_UTF8_NAME = {'n', 'o', 't', '-', (byte)0xFF, '-', 'u', 't', 'f', '8'};

    private SourceTrees() {
    }

    /**
     * Nested dirs, empty files and dirs, random and compressible files (one over 4 MiB, one over the in-memory
     * limit), a non-UTF-8 name, a path over 255 bytes, an in-tree symlink and a FIFO.
     */
    static Path awkwardTree(final Path root) throws IOException, InterruptedException {
        final Random random = new Random(42);
        Files.createDirectories(root.resolve("train/cats"));
        Files.createDirectories(root.resolve("train/dogs"));
        Files.createDirectories(root.resolve("empty/nested-empty"));
        Files.createDirectories(root.resolve("val"));
        Files.write(root.resolve("train/empty-file"), new byte[0]);
        for (int i = 0; i < 40; i++) {
            final byte[] image = new byte[1 + random.nextInt(9000)];
            random.nextBytes(image);
            Files.write(root.resolve("train/cats/" + i + ".jpg"), image);
            Files.writeString(root.resolve("train/dogs/" + i + ".csv"), csv(random, 50 + i * 20));
        }
        Files.writeString(root.resolve("train/big.csv"), csv(random, 120_000));
        final byte[] huge = new byte[(int)BodyEncoder.IN_MEMORY_LIMIT + 1234];
        random.nextBytes(huge);
        Files.write(root.resolve("train/over-memory-limit.bin"), huge);
        for (int i = 0; i < 5; i++) {
            Files.writeString(root.resolve("val/v" + i + ".txt"), csv(random, 100));
        }
        Files.write(NativePaths.pathOf(PathBytesForTests.child(root, NON_UTF8_NAME)),
            "latin-1 name".getBytes(StandardCharsets.UTF_8));
        Path deep = root;
        for (int level = 0; level < 4; level++) {
            deep = deep.resolve(("level" + level + "-").repeat(12));
        }
        Files.createDirectories(deep);
        Files.writeString(deep.resolve("f".repeat(200)), "deep");
        assertEquals(true, root.relativize(deep.resolve("f".repeat(200))).toString().length() > 255);
        Files.createSymbolicLink(root.resolve("val/link-to-big"), Path.of("../train/big.csv"));
        Files.createSymbolicLink(root.resolve("train/dangling-inside"), Path.of("no-such-file"));
        final Process fifo = new ProcessBuilder("mkfifo", root.resolve("train/a-fifo").toString()).start();
        assertEquals(0, fifo.waitFor());
        return root;
    }

    /** A sparse file of {@code size} bytes with a few non-zero bytes near both ends. */
    static Path sparseFile(final Path file, final long size) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(size);
            f.seek(17);
            f.write("head".getBytes(StandardCharsets.US_ASCII));
            f.seek(size - 5);
            f.write("tail".getBytes(StandardCharsets.US_ASCII));
        }
        return file;
    }

    private static String csv(final Random random, final int rows) {
        final StringBuilder sb = new StringBuilder(rows * 32);
        for (int i = 0; i < rows; i++) {
            sb.append(i).append(',').append(random.nextInt(1000)).append(",label_").append(random.nextInt(10))
                .append(',').append(random.nextDouble() < 0.5 ? "cat" : "dog").append('\n');
        }
        return sb.toString();
    }

    /** Absolute bytes of {@code root/name}. */
    static final class PathBytesForTests {
        static byte[] child(final Path root, final byte[] name) {
            return org.fanstore.prep.format.PathBytes.child(NativePaths.bytesOf(root.toAbsolutePath()), name);
        }
    }
}
