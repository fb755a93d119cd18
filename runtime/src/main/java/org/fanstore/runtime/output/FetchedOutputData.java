package org.fanstore.runtime.output;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.IntStream;

import org.fanstore.runtime.fetch.RemoteFetcher;

/**
 * Where this rank's readers open a committed output: its file in the upper directory when this rank holds it, else a
 * read-only copy in this rank's tmpfs cache area, fetched from the holder once (concurrent readers of one
 * file share the fetch) and kept for later opens. The copy appears under its final name only when complete.
 *
 * <p>These copies are not counted against {@code --cache-mb} (outputs are few and read rarely, typically a
 * checkpoint loaded once per rank); they go with the shared-memory directory at the end of the job.
 */
public final class FetchedOutputData implements OutputData {
    /** After a node loss, how long a reader waits for a live rank's output to reach --output-dir. */
    private static final long OUTPUT_DRAIN_WAIT_NANOS = 5_000_000_000L;

    private final int rank;
    private final HeldOutputs heldOutputs;
    private final RemoteFetcher fetcher;
    private final Path cacheDir;
    private final Map<Long, CompletableFuture<Path>> fetching = new ConcurrentHashMap<>();
    /** --output-dir (null without): after a node loss, where other ranks' outputs are read once drained. */
    private final Path outputDir;
    /** Ranks lost after ready; empty while the world is whole (then every holder is fetched from). */
    private final Supplier<int[]> lostRanks;
    private final Set<Long> named = ConcurrentHashMap.newKeySet();

    public FetchedOutputData(int rank, HeldOutputs held, RemoteFetcher fetcher, Path cacheDir) {
        this(rank, held, fetcher, cacheDir, null, () -> new int[0]);
    }

    public FetchedOutputData(int rank, HeldOutputs held, RemoteFetcher fetcher, Path cacheDir, Path outputDir,
                             Supplier<int[]> lostRanks) {
        this.rank = rank;
        this.heldOutputs = held;
        this.fetcher = fetcher;
        this.cacheDir = cacheDir;
        this.outputDir = outputDir;
        this.lostRanks = lostRanks;
    }

    @Override
    public Path readable(OutputRecord file, Duration timeout) throws IOException {
        if (file.kind() != OutputRecord.Kind.FILE) {
            throw new IllegalArgumentException("not a file: " + file);
        }
        if (file.holderRank() == rank) {
            Path held = heldOutputs.file(file.objectId());
            if (held == null) {
                throw new NoSuchFileException("output object " + file.objectId() + " (not staged on this rank)");
            }
            return held;
        }
        // Object ids are never reused for other bytes, so a complete copy under this name is the right one.
        Path copy = cacheDir.resolve("output-" + file.holderRank() + "-" + file.objectId());
        if (Files.isRegularFile(copy) && Files.size(copy) == file.size()) {
            return copy;
        }
        int[] lost = lostRanks.get();
        if (lost.length > 0) {
            return afterLoss(file, IntStream.of(lost).anyMatch(r -> r == file.holderRank()), timeout);
        }
        CompletableFuture<Path> mine = new CompletableFuture<>();
        CompletableFuture<Path> running = fetching.putIfAbsent(file.objectId(), mine);
        if (running != null) {
            return await(running);
        }
        try {
            mine.complete(fetch(file, copy, timeout));
        } catch (IOException | RuntimeException e) {
            mine.completeExceptionally(e);
        } finally {
            fetching.remove(file.objectId(), mine);
        }
        return await(mine);
    }

    /**
     * After a node was lost this rank fetches from no one (liveness/README.md, "A node lost after ready"): another
     * rank's output is read from its drained copy in --output-dir (same size). One held by a live rank may still be
     * on its way there (waited for up to {@code OUTPUT_DRAIN_WAIT_NANOS}); one held by the lost rank and not drained
     * is gone: ENOENT, named once in the log.
     */
    private Path afterLoss(OutputRecord file, boolean heldByLost, Duration timeout) throws IOException {
        String key = new String(file.key(), StandardCharsets.UTF_8);
        Path drained = outputDir == null ? null : outputDir.resolve(key);
        long deadline = System.nanoTime() + (heldByLost ? 0 : Math.min(timeout.toNanos(), OUTPUT_DRAIN_WAIT_NANOS));
        while (true) {
            if (drained != null && Files.isRegularFile(drained) && Files.size(drained) == file.size()) {
                return drained;
            }
            if (System.nanoTime() - deadline >= 0) {
                break;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        String why = heldByLost ? "was held only by rank " + file.holderRank() + ", lost before it was drained"
                + (outputDir == null ? " (no --output-dir)" : " to " + outputDir)
                : "is held by rank " + file.holderRank() + ", which this rank no longer reaches after a node was lost,"
                + (outputDir == null ? " and there is no --output-dir to read it from" : " and is not in " + outputDir);
        if (named.add(file.objectId())) {
            System.err.println("fanstore rank " + rank + ": output " + key + " " + why + ": readers here get ENOENT");
        }
        throw new LostOutputException(key, why);
    }

    private Path fetch(OutputRecord file, Path copy, Duration timeout) throws IOException {
        Files.createDirectories(cacheDir);
        Path partial = cacheDir.resolve(".partial-" + copy.getFileName() + "-" + Thread.currentThread().getId());
        try {
            try (FileChannel out = FileChannel.open(partial, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                if (file.size() > 0) {
                    fetcher.fetch(file.holderRank(), file.objectId(), file.size(), out, timeout);
                }
            }
            Files.setPosixFilePermissions(partial, PosixFilePermissions.fromString("r--r--r--"));
            Files.move(partial, copy, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return copy;
        } finally {
            Files.deleteIfExists(partial);
        }
    }

    private static Path await(CompletableFuture<Path> f) throws IOException {
        try {
            return f.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            if (e.getCause() instanceof UncheckedIOException u) {
                throw u.getCause();
            }
            throw e;
        }
    }
}
