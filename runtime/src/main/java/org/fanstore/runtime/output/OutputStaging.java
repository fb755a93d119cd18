package org.fanstore.runtime.output;

import java.nio.file.Path;

/**
 * The staging links of this rank ({@code staging/h<id>}, second names of the outputs it published): what the fetch
 * service serves to other ranks.
 */
public interface OutputStaging {
    /** The staging link of published output {@code objectId} on this rank, or null if this rank has none. */
    Path file(long objectId);
}
