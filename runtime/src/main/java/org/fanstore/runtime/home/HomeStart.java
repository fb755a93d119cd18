package org.fanstore.runtime.home;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.fanstore.prep.format.Manifest;
import org.fanstore.runtime.fill.source.HomeSource;

/**
 * The home's slow first steps, off the load's main line (README.md, "Start"): opening it and reading its manifest
 * run while the rank joins the world, and the held partitions' checks while the table lands. From a bucket the first
 * is the object store client's start (~0.4 s, mostly the SDK's class loading) and a GET, the second a round trip a
 * partition. Each runs on one short-lived daemon thread ({@code fanstore-home-open}, {@code fanstore-home-check});
 * each wait is the store client's own bounds (prep/store README) or a shared FS's read.
 */
public final class HomeStart {
    /** The home and its manifest. */
    public record Opened(DatasetHome home, Manifest manifest) {
    }

    private final CompletableFuture<Opened> opened = new CompletableFuture<>();
    private final CompletableFuture<Void> checked = new CompletableFuture<>();

    private HomeStart() {
    }

    /** Opens the home {@code data} names (DatasetHome.open) and reads its manifest, on a thread of its own. */
    public static HomeStart begin(String data, Path scratchParent) {
        HomeStart s = new HomeStart();
        daemon("fanstore-home-open", () -> {
            DatasetHome home = null;
            try {
                home = DatasetHome.open(data, scratchParent);
                s.opened.complete(new Opened(home, home.manifest()));
            } catch (Throwable e) {   // an Error too: await() must never wait for a thread that died
                if (home != null) {
                    home.close();
                }
                s.opened.completeExceptionally(e);
            }
        });
        return s;
    }

    /** The home and its manifest, or the failure of opening it or reading the manifest (the home closed then). */
    public Opened await() throws IOException {
        return get(opened);
    }

    /** After a failure elsewhere: closes the home once it is open. */
    public void abandon() {
        opened.thenAccept(o -> o.home().close());
    }

    /** Checks partitions {@code held} of {@code source} ({@link HomeSource#checkAll}) on a thread of its own. */
    public void check(HomeSource source, List<Integer> held) {
        daemon("fanstore-home-check", () -> {
            try {
                source.checkAll(held);
                checked.complete(null);
            } catch (Throwable e) {
                checked.completeExceptionally(e);
            }
        });
    }

    /** The checks' end, or the failure the first of them in list order met. */
    public void awaitChecks() throws IOException {
        get(checked);
    }

    private static <T> T get(CompletableFuture<T> f) throws IOException {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while opening the dataset's home", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new UncheckedIOException(new IOException(e.getCause()));
        }
    }

    private static void daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }
}
