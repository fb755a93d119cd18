package org.fanstore.runtime.output;

import java.nio.file.Path;
import java.util.Optional;

/**
 * Applies decided records to this rank's namespace, and tells the drain about every record that concerns bytes
 * this rank holds: its own new file, and a file of its that the record replaces, removes or renames. The
 * holder of a replaced file must hear of it even though the new bytes live elsewhere, or its late copy could
 * overwrite the newer one in the output directory.
 */
public final class OutputApplier {
    private final OutputNamespace namespace;
    private final OutputStaging staging;
    private final OutputDrain drain;
    private final int rank;

    public OutputApplier(OutputNamespace namespace, OutputStaging staging, OutputDrain drain, int rank) {
        this.namespace = namespace;
        this.staging = staging;
        this.drain = drain;
        this.rank = rank;
    }

    public OutputNamespace namespace() {
        return namespace;
    }

    /** Serialised: what was at the key (and target) just before is part of what the drain is told. */
    public synchronized void apply(OutputRecord r) {
        boolean mine = switch (r.kind()) {
            case FILE -> r.holderRank() == rank || heldHere(namespace.lookup(r.key()));
            case UNLINK -> heldHere(namespace.lookup(r.key()));
            case RENAME -> r.holderRank() == rank || heldHere(namespace.lookup(r.key()))
                    || heldHere(namespace.lookup(r.target()));
            case DIR, RMDIR -> false;
        };
        namespace.apply(r);
        if (mine) {
            boolean newBytesHere = r.kind() == OutputRecord.Kind.FILE && r.holderRank() == rank;
            Path file = newBytesHere ? staging.file(r.objectId()) : null;
            drain.applied(r, file);
        }
    }

    private boolean heldHere(Optional<OutputRecord> previous) {
        return previous.isPresent() && previous.get().kind() == OutputRecord.Kind.FILE
                && previous.get().holderRank() == rank;
    }
}
