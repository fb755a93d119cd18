package org.fanstore.prep;

import java.nio.file.Path;

import org.fanstore.prep.format.Manifest;

/** What a finished prep wrote, and how long it took. */
public record PrepResult(Path output, Manifest manifest, double seconds) {
    /** One line: files, bytes, seconds, files/s, MiB/s (2^20 bytes, as the progress bars), partitions, stored size. */
    public String summary() {
        final double mb = manifest.rawBytes() / (double)(1 << 20);
        final double s = Math.max(seconds, 1e-9);
        return String.format("fanstore prep: %d files, %.1f MiB in %.2f s (%.0f files/s, %.1f MiB/s) -> %s " +
                "(%d partitions + %d broadcast, stored %.1f MiB, compress %s)",
            manifest.files(), mb, seconds, manifest.files() / s, mb / s, output,
            manifest.regularPartitions().size(), manifest.broadcastPartitions().size(),
            manifest.storedBytes() / (double)(1 << 20), manifest.compress().manifestWord());
    }
}
