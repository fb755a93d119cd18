package org.fanstore.runtime.output;

/**
 * Mirrors this rank's upper directory to the persistent output directory ({@link DirectoryDrain}). Told of every
 * applied record that concerns this rank; must not block the caller.
 */
public interface OutputDrain {
    OutputDrain NONE = () -> { };

    /** Something in this rank's upper directory or journal changed: a pass should run soon. */
    void wake();

    /**
     * The commit of {@code r}, started on this rank, has finished: every rank applied it, or the commit failed.
     * Until then another rank may not know yet that {@code r} replaced its file.
     */
    default void settled(OutputRecord r) {
    }
}
