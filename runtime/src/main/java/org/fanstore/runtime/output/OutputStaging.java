package org.fanstore.runtime.output;

import java.nio.file.Path;
import java.util.List;

/**
 * The node-local staging files of this rank (built by the node side of the write path): what the fetch service
 * serves to other ranks, what the drain copies out, and what is still open when the job ends.
 */
public interface OutputStaging {
    /** The staging file holding committed output {@code objectId} on this rank, or null if this rank has none. */
    Path file(long objectId);

    /** Keys (relative to the mount) of outputs being written on this node and never committed, for the report. */
    List<String> uncommitted();
}
