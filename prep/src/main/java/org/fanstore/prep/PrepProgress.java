package org.fanstore.prep;


import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * Progress of a prep run, reported by the writer thread after each entry. On a terminal it is a progress bar
 * (bytes, rate, ETA, files); otherwise nothing until the caller prints the one-line summary.
 */
public interface PrepProgress extends AutoCloseable {
    /** Called once the tree has been walked. */
    void start(long files, long bytes);

    /**
     * A phase without a bar of its own (walking the tree, building the metadata table), said when it begins and
     * again with what it did when it ends: at 14M files each takes tens of seconds, and a silent terminal for that
     * long looks like a hang. A line on a terminal, nothing elsewhere.
     */
    default void phase(final String line) {
    }

    /** Called after each file or symlink is written. */
    void advance(long bytes);

    @Override
    void close();

    /** No output (pipes, log files, tests). */
    static PrepProgress silent() {
        return new PrepProgress() {
            @Override
            public void start(final long files, final long bytes) {
            }

            @Override
            public void advance(final long bytes) {
            }

            @Override
            public void close() {
            }
        };
    }

    /** A progress bar on stderr. */
    static PrepProgress terminal() {
        return terminal("prep", "files");
    }

    /** A progress bar on stderr named {@code task}, counting {@code units} (one per advance) besides the bytes. */
    static PrepProgress terminal(final String task, final String units) {
        return new PrepProgress() {
            private ProgressBar bar;
            private long totalFiles;
            private long files;
            private long done;
            private long started;

            @Override
            public void start(final long totalFiles, final long bytes) {
                this.totalFiles = totalFiles;
                bar = new ProgressBarBuilder().setTaskName(task).setInitialMax(Math.max(1, bytes))
                    .setStyle(ProgressBarStyle.ASCII).setUnit(" MiB", 1 << 20).setUpdateIntervalMillis(250).build();
                started = System.nanoTime();
            }

            @Override
            public void phase(final String line) {
                if (bar == null) {
                    System.err.println(task + ": " + line);
                }
            }

            @Override
            public void advance(final long bytes) {
                bar.stepBy(bytes);
                done += bytes;
                if (++files % 1024 == 0 || files == totalFiles) {
                    // Our own speed, not the library's: it prints "?" for the first whole second.
                    final double seconds = Math.max(1e-3, (System.nanoTime() - started) / 1e9);
                    bar.setExtraMessage(String.format(" %d/%d %s, %.1f MiB/s", files, totalFiles, units,
                        done / (double)(1 << 20) / seconds));
                }
            }

            @Override
            public void close() {
                if (bar != null) {
                    bar.close();
                    bar = null;
                }
            }
        };
    }
}
