package org.fanstore.prep.format;

import static org.fanstore.prep.format.FileModes.*;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * What must hold before any byte of a dataset file is read: it is a regular file (a symlink to one is fine).
 * A partition replaced by a symlink to {@code /dev/zero} reads forever; a FIFO blocks the open itself until a
 * writer comes. Both are told apart with {@code stat} alone, which never blocks, so every reader of a dataset
 * (verify, ls/cat/stat, the runtime's copy) asks here first and refuses the file at once, naming it.
 *
 * <p>Not covered: a file swapped for a FIFO between this check and the open (only the dataset's owner can do
 * that, and then it is their own job that waits).
 */
public final class PartitionFiles {
    private PartitionFiles() {
    }

    /**
     * Why {@code file} may not be read as a dataset file ("is a FIFO, not a regular file: ..."), or null when it
     * is a regular file or does not exist (the caller reports a missing file its own way).
     */
    public static String notRegular(final Path file) throws IOException {
        final int mode;
        try {
            mode = (Integer)Files.getAttribute(file, "unix:mode");
        } catch (final NoSuchFileException e) {
            return null;   // missing, or a symlink whose target is missing: the caller's "missing" message
        } catch (final UnsupportedOperationException | IllegalArgumentException e) {
            return Files.isRegularFile(file) || !Files.exists(file) ? null : "is not a regular file" + advice();
        }
        final String kind = kind(type(mode));
        if (kind == null) {
            return null;
        }
        String via = "";
        if (Files.isSymbolicLink(file)) {
            via = " (a symlink to " + file.toRealPath() + ")";
        }
        return "is " + kind + via + ", not a regular file" + advice();
    }

    /** Throws a {@link CorruptPartitionException} naming {@code file} unless it is a regular file (or missing). */
    public static void requireRegular(final Path file) throws IOException {
        final String problem = notRegular(file);
        if (problem != null) {
            throw new CorruptPartitionException(file, problem);
        }
    }

    /** The first partition of {@code manifest} in {@code datasetDir} that is not a regular file, as a line. */
    public static String firstNotRegular(final Path datasetDir, final Manifest manifest) throws IOException {
        for (final PartitionInfo p : manifest.partitions()) {
            final Path file = datasetDir.resolve(p.fileName());
            final String problem = notRegular(file);
            if (problem != null) {
                return file + " " + problem;
            }
        }
        return null;
    }

    private static String kind(final int type) {
        return switch (type) {
            case S_IFIFO -> "a FIFO (named pipe)";
            case S_IFCHR -> "a character device";
            case S_IFBLK -> "a block device";
            case S_IFDIR -> "a directory";
            case S_IFSOCK -> "a socket";
            default -> null;
        };
    }

    private static String advice() {
        return ": a dataset holds only the regular files fanstore prep wrote; restore the file or run fanstore " +
            "prep again";
    }
}
