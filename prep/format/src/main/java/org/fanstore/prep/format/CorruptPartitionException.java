package org.fanstore.prep.format;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A partition file (or one body in it) failed validation. The message names the file and, for a body, the
 * entry's path: the data must not be served, and the fix is to re-run {@code fanstore prep} or re-copy the file.
 */
public final class CorruptPartitionException extends IOException {
    private static final long serialVersionUID = 1L;

    private final Path file;
    private final byte[] entryPath;

    public CorruptPartitionException(final Path file, final String problem) {
        super(file + ": " + problem);
        this.file = file;
        this.entryPath = null;
    }

    public CorruptPartitionException(final Path file, final byte[] entryPath, final String problem) {
        super(file + ": " + PathBytes.display(entryPath) + ": " + problem);
        this.file = file;
        this.entryPath = entryPath.clone();
    }

    /** The partition file. */
    public Path file() {
        return file;
    }

    /** The entry whose body is bad, or null when the partition structure itself is bad. */
    public byte[] entryPath() {
        return entryPath == null ? null : entryPath.clone();
    }
}
