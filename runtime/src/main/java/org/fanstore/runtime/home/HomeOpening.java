package org.fanstore.runtime.home;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.fanstore.prep.format.Manifest;

/**
 * Opens a dataset's home and reads its manifest on another thread, so that a bucket's cost (the S3 client's start
 * and a round trip) overlaps the rank's join of the world instead of following it. One use: {@link #start}, then
 * {@link #join} (or {@link #abandon} when the rank fails first: the home is closed once it is open).
 */
public final class HomeOpening {
    private record Opened(DatasetHome home, Manifest manifest) {
    }

    private final CompletableFuture<Opened> opening;
    private Opened opened;

    private HomeOpening(CompletableFuture<Opened> opening) {
        this.opening = opening;
    }

    /** Starts opening the home {@code data} names ({@link DatasetHome#open}) and reading its manifest. */
    public static HomeOpening start(String data, Path scratchParent) {
        return new HomeOpening(CompletableFuture.supplyAsync(() -> {
            try {
                DatasetHome home = DatasetHome.open(data, scratchParent);
                try {
                    return new Opened(home, home.manifest());
                } catch (IOException | RuntimeException e) {
                    home.close();
                    throw e;
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }));
    }

    /** The open home, within {@code bound}; its failure as this thread's exception (the same one-line message). */
    public DatasetHome join(Duration bound) throws IOException {
        try {
            opened = opening.get(bound.toNanos(), TimeUnit.NANOSECONDS);
            return opened.home();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() instanceof UncheckedIOException u ? u.getCause() : e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            throw cause instanceof RuntimeException r ? r : new IllegalStateException(cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            abandon();
            throw new IOException("interrupted while opening the dataset's home", e);
        } catch (TimeoutException e) {
            abandon();
            throw new IOException("the dataset's home did not answer within " + bound.toSeconds() + " s");
        }
    }

    /** The manifest read with the home; after {@link #join}. */
    public Manifest manifest() {
        return opened.manifest();
    }

    /** Nobody will join: the home is closed as soon as it is open. */
    public void abandon() {
        opening.thenAccept(o -> o.home().close());
    }
}
