package org.fanstore.runtime.placement;

import java.io.IOException;
import java.nio.file.FileStore;
import java.util.Locale;

/**
 * How many bytes of pulled partitions ({@link PartitionPuller}) a node's local directory may take, as given
 * to {@code --local-capacity}: {@code auto} (the default), a size ({@code 500M}, {@code 20G}, plain bytes) or a
 * percentage of the local file system's size ({@code 50%}). The partitions the rank holds anyway do not count.
 *
 * <p>{@code auto} asks the file system before each partition: what is usable now minus a margin of
 * max(10% of its size, 1 GiB), so the node keeps room for unpacked files, logs and other jobs. An explicit
 * value is the operator's decision and is not checked against free space: a disk that fills anyway makes that
 * partition's pull fail with ENOSPC, which costs the pull, never a read.
 */
public final class LocalCapacity {
    public static final String AUTO = "auto";
    private static final long MIN_MARGIN = 1L << 30;

    private final long bytes;
    private final int percent;

    private LocalCapacity(long bytes, int percent) {
        this.bytes = bytes;
        this.percent = percent;
    }

    /** Parses a --local-capacity value. */
    public static LocalCapacity parse(String text) {
        String s = text.trim().toUpperCase(Locale.ROOT);
        try {
            if (s.equals("AUTO")) {
                return new LocalCapacity(-1, -1);
            }
            if (s.endsWith("%")) {
                int p = Integer.parseInt(s.substring(0, s.length() - 1));
                if (p < 0 || p > 100) {
                    throw new NumberFormatException();
                }
                return new LocalCapacity(-1, p);
            }
            int shift = switch (s.isEmpty() ? ' ' : s.charAt(s.length() - 1)) {
                case 'K' -> 10;
                case 'M' -> 20;
                case 'G' -> 30;
                case 'T' -> 40;
                default -> 0;
            };
            long n = Long.parseLong(shift == 0 ? s : s.substring(0, s.length() - 1));
            if (n < 0 || n > Long.MAX_VALUE >> shift) {
                throw new NumberFormatException();
            }
            return new LocalCapacity(n << shift, -1);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--local-capacity must be auto, a size like 500M or 20G, or a"
                    + " percentage like 50%, got '" + text + "'");
        }
    }

    /** How many more bytes may be pulled into {@code store}, given {@code pulled} bytes pulled so far. */
    public long remaining(FileStore store, long pulled) throws IOException {
        if (bytes >= 0) {
            return bytes - pulled;
        }
        long total = store.getTotalSpace();
        if (percent >= 0) {
            return total / 100 * percent - pulled;
        }
        return store.getUsableSpace() - Math.max(total / 10, MIN_MARGIN);
    }
}
