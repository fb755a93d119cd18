package org.fanstore.runtime.output;

import java.nio.file.Path;

/**
 * Copies this rank's committed outputs to the persistent output directory, mirroring renames and unlinks.
 * Called on the holder rank for every applied record that concerns a file it holds ({@code file} is the
 * staging file for FILE, null otherwise). Must not block the caller.
 */
public interface OutputDrain {
    OutputDrain NONE = (r, file) -> { };

    void applied(OutputRecord r, Path file);

    /**
     * The commit of {@code r}, started on this rank, has finished: every rank applied it, or the commit failed.
     * Until then another rank may not know yet that {@code r} replaced its file.
     */
    default void settled(OutputRecord r) {
    }
}
