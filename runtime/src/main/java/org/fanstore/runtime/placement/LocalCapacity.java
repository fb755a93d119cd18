package org.fanstore.runtime.placement;

import java.io.IOException;
import java.nio.file.FileStore;
import java.util.Locale;

/**
 * How many bytes of partitions a node keeps on its local directory for the job (runtime/fill, KeepPlan), as given
 * to {@code --local-capacity}: {@code auto} (the default), a size ({@code 500M}, {@code 20G}, plain bytes) or a
 * percentage of the local file system's size ({@code 50%}).
 *
 * <p>{@code auto} asks the file system once, at start: what is usable then minus 10% of its size, so the node keeps
 * room for unpacked files, the cache's spill, logs and other jobs. An explicit value is the operator's decision and
 * is not checked against free space: a disk that fills anyway makes the partition being filled stop there (it is
 * read from its sources from then on), which costs its copy, never a read.
 */
public final class LocalCapacity {
    public static final String AUTO = "auto";

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

    /** The bytes of partitions a node may keep in {@code store}, asked now. */
    public long budget(FileStore store) throws IOException {
        if (bytes >= 0) {
            return bytes;
        }
        long total = store.getTotalSpace();
        if (percent >= 0) {
            return total / 100 * percent;
        }
        return Math.max(0, store.getUsableSpace() - total / 10);
    }
}
