package org.fanstore.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

import org.fanstore.runtime.output.DirectoryDrain;
import org.fanstore.runtime.output.OutputNamespace;
import org.fanstore.runtime.output.OutputRecord;

/**
 * The drain's throughput: mirrors a directory (standing for a rank's upper directory) to an output directory the
 * way a runtime's final pass does at the end of a job (partial name, fsync, CRC32C re-read, rename, directory
 * fsync) and prints the wall time. Usage: {@code DrainBench <source dir> <output dir>}; see
 * bench/drain-throughput.sh.
 */
public final class DrainBench {
    private DrainBench() {
    }

    public static void main(String[] args) throws Exception {
        OutputNamespace none = new OutputNamespace() {
            @Override
            public int check(OutputRecord r) {
                return 0;
            }

            @Override
            public void apply(OutputRecord r) {
            }

            @Override
            public Optional<OutputRecord> lookup(byte[] key) {
                return Optional.empty();
            }
        };
        DirectoryDrain drain = new DirectoryDrain(Path.of(args[1]), Path.of(args[0]), 0, 1, none, key -> false);
        long start = System.nanoTime();
        DirectoryDrain.Report report = drain.finish(Duration.ofMinutes(30));
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("drain files=%d bytes=%d seconds=%.3f MBps=%.0f failed=%s%n", report.copiedFiles(),
                report.copiedBytes(), seconds, report.copiedBytes() / 1e6 / seconds, report.failed());
        System.exit(report.failed().isEmpty() ? 0 : 1);
    }
}
