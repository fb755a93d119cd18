package org.fanstore.runtime.output;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

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
    private final int rank;
    private final HeldOutputs heldOutputs;
    private final RemoteFetcher fetcher;
    private final Path cacheDir;
    private final Map<Long, CompletableFuture<Path>> fetching = new ConcurrentHashMap<>();

    public FetchedOutputData(int rank, HeldOutputs held, RemoteFetcher fetcher, Path cacheDir) {
        this.rank = rank;
        this.heldOutputs = held;
        this.fetcher = fetcher;
        this.cacheDir = cacheDir;
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
