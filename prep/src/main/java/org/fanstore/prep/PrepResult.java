package org.fanstore.prep;

import java.nio.file.Path;

import org.fanstore.prep.format.Manifest;

/** What a finished prep wrote, and how long it took. */
public record PrepResult(Path output, Manifest manifest, double seconds) {
    /** One line: files, bytes, seconds, files/s, MB/s (10^6 bytes), partitions and stored size. */
    public String summary() {
        final double mb = manifest.rawBytes() / 1e6;
        final double s = Math.max(seconds, 1e-9);
        return String.format("fanstore prep: %d files, %.1f MB in %.2f s (%.0f files/s, %.1f MB/s) -> %s " +
                "(%d partitions + %d broadcast, stored %.1f MB, compress %s)",
            manifest.files(), mb, seconds, manifest.files() / s, mb / s, output,
            manifest.regularPartitions().size(), manifest.broadcastPartitions().size(),
            manifest.storedBytes() / 1e6, manifest.compress().manifestWord());
    }
}
