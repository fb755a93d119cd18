package org.fanstore.runtime.output;

import java.nio.file.Path;

/**
 * The outputs this rank published, by object id: what the fetch service serves to other ranks. An id names the
 * file in the upper directory under its current key (a rename moves it; an unlink or a newer publish ends it).
 */
public interface HeldOutputs {
    /** The file of published output {@code objectId} on this rank, or null if this rank holds none by that id. */
    Path file(long objectId);
}
