package org.fanstore.prep.format;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bounded fuzz of the partition and manifest readers (issue 10): random mutations of the golden vectors in
 * tests/vectors/partition must only ever be refused with the documented exceptions ({@link CorruptPartitionException},
 * {@link BadManifestException}), never anything else, never a hang. Fixed seed; runs {@code fanstore.fuzz.seconds}
 * (default 20) seconds: {@code -Dfanstore.fuzz.seconds=600} runs it longer, {@code -Dfanstore.fuzz.seed=N} varies it.
 */
class PartitionReaderFuzzTest {
    private static final long CASE_TIMEOUT_SECONDS = 10;
    private static final long[] BOUNDARY = {0, 1, -1, 63, 64, 4096, Integer.MAX_VALUE, Integer.MIN_VALUE,
        Long.MAX_VALUE, Long.MIN_VALUE, 0xffffffffL};

    @TempDir
    Path tmp;

    @Test
    void mutatedVectorsAreRefusedOnlyWithTheDocumentedExceptions() throws Exception {
        final Path golden = PartitionVectorsTest.vectorDir();
        final byte[] part = Files.readAllBytes(golden.resolve(PartitionVectors.PARTITION));
        final byte[] manifest = Files.readAllBytes(golden.resolve(Manifest.FILE_NAME));
        final double seconds = Double.parseDouble(System.getProperty("fanstore.fuzz.seconds", "20"));
        final SplittableRandom rnd = new SplittableRandom(Long.getLong("fanstore.fuzz.seed", 1L));
        final ExecutorService runner = Executors.newSingleThreadExecutor(r -> {
            final Thread t = new Thread(r, "fuzz-case");
            t.setDaemon(true);
            return t;
        });
        final long deadline = System.nanoTime() + (long)(seconds * 1e9);
        int cases = 0;
        int accepted = 0;
        try {
            while (System.nanoTime() < deadline) {
                final Path dir = Files.createDirectories(tmp.resolve("c" + (cases % 4)));
                final boolean mutateManifest = rnd.nextInt(4) == 0;
                Files.write(dir.resolve(PartitionVectors.PARTITION), mutateManifest ? part : mutate(part, rnd));
                Files.write(dir.resolve(Manifest.FILE_NAME), mutateManifest ? mutate(manifest, rnd) : manifest);
                final Future<Boolean> outcome = runner.submit(() -> readEverything(dir));
                try {
                    if (outcome.get(CASE_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                        accepted++;
                    }
                } catch (final TimeoutException hang) {
                    fail("reader still busy after " + CASE_TIMEOUT_SECONDS + " s on case " + cases + " (kept in " +
                        keep(dir) + ")");
                } catch (final java.util.concurrent.ExecutionException e) {
                    final Throwable cause = e.getCause();
                    fail("case " + cases + " (kept in " + keep(dir) + ") threw " + cause, cause);
                }
                cases++;
            }
        } finally {
            runner.shutdownNow();
        }
        System.out.printf("partition fuzz: %d mutated datasets in %.0f s, %d read cleanly%n", cases, seconds,
            accepted);
        assertTrue(cases > 0);
    }

    /** True when the dataset was accepted and every body read; false when refused as documented. */
    private static boolean readEverything(final Path dir) throws IOException {
        try {
            final Manifest m = Manifest.read(dir);
            m.toText();
            try (PartitionReader r = PartitionReader.open(dir.resolve(PartitionVectors.PARTITION))) {
                for (final PartitionEntry e : r.entries()) {
                    if (!e.isDir()) {
                        r.copyRaw(e, Channels.newChannel(OutputStream.nullOutputStream()));
                    }
                }
            }
            DatasetVerifier.verify(dir);
            return true;
        } catch (final CorruptPartitionException | BadManifestException documented) {
            return false;
        }
    }

    private static byte[] mutate(final byte[] original, final SplittableRandom rnd) {
        byte[] b = original.clone();
        final int rounds = 1 + rnd.nextInt(4);
        for (int r = 0; r < rounds; r++) {
            final int span = rnd.nextBoolean() && b.length > 600 ? 600 : Math.max(1, b.length);
            switch (rnd.nextInt(5)) {
                case 0, 1 -> {
                    if (b.length > 0) {
                        b[rnd.nextInt(span)] ^= (byte)(1 + rnd.nextInt(255));
                    }
                }
                case 2 -> {
                    if (b.length >= 8) {
                        final long v = BOUNDARY[rnd.nextInt(BOUNDARY.length)];
                        final int at = rnd.nextInt(Math.max(1, Math.min(span, b.length) - 7)) & ~3;
                        final int width = rnd.nextBoolean() ? 8 : 4;
                        for (int k = 0; k < width; k++) {
                            b[at + k] = (byte)(v >>> (8 * k));
                        }
                    }
                }
                case 3 -> b = Arrays.copyOf(b, b.length == 0 ? 0 : rnd.nextInt(b.length));
                default -> {
                    final byte[] tail = new byte[rnd.nextInt(256)];
                    rnd.nextBytes(tail);
                    final byte[] grown = Arrays.copyOf(b, b.length + tail.length);
                    System.arraycopy(tail, 0, grown, b.length, tail.length);
                    b = grown;
                }
            }
        }
        return b;
    }

    private static Path keep(final Path dir) throws IOException {
        final Path kept = Files.createTempDirectory("fanstore-fuzz-case");
        try (var files = Files.list(dir)) {
            for (final Path f : (Iterable<Path>)files::iterator) {
                Files.copy(f, kept.resolve(f.getFileName()));
            }
        }
        return kept;
    }
}
