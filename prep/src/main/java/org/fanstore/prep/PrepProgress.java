package org.fanstore.prep;

import java.time.temporal.ChronoUnit;

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
        return new PrepProgress() {
            private ProgressBar bar;
            private long totalFiles;
            private long files;

            @Override
            public void start(final long totalFiles, final long bytes) {
                this.totalFiles = totalFiles;
                bar = new ProgressBarBuilder().setTaskName("prep").setInitialMax(Math.max(1, bytes))
                    .setStyle(ProgressBarStyle.ASCII).setUnit(" MiB", 1 << 20).showSpeed()
                    .setSpeedUnit(ChronoUnit.SECONDS).setUpdateIntervalMillis(250).build();
            }

            @Override
            public void advance(final long bytes) {
                bar.stepBy(bytes);
                if (++files % 1024 == 0 || files == totalFiles) {
                    bar.setExtraMessage(" " + files + "/" + totalFiles + " files");
                }
            }

            @Override
            public void close() {
                if (bar != null) {
                    bar.close();
                }
            }
        };
    }
}
