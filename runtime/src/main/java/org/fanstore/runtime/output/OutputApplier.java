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
        OutputRecord told = r.kind() == OutputRecord.Kind.RENAME ? withSourceHolder(r) : r;
        boolean mine = switch (r.kind()) {
            case FILE -> r.holderRank() == rank || heldHere(namespace.lookup(r.key()));
            case UNLINK -> heldHere(namespace.lookup(r.key()));
            case RENAME -> told.holderRank() == rank || heldHere(namespace.lookup(r.target()));
            case DIR, RMDIR -> false;
        };
        namespace.apply(r);
        if (mine) {
            boolean newBytesHere = r.kind() == OutputRecord.Kind.FILE && r.holderRank() == rank;
            Path file = newBytesHere ? staging.file(r.objectId()) : null;
            drain.applied(told, file);
        }
    }

    /**
     * A RENAME as the shim sends it names no holder: the drain needs the source's. A file's holder moves its copy;
     * a directory may hold files of every rank, so every rank moves it (the first move wins, the others find no
     * source and do nothing).
     */
    /** Called by the committer once a commit this rank started has finished on every rank (or failed). */
    public void settled(OutputRecord r) {
        if (r.kind() == OutputRecord.Kind.FILE && r.holderRank() == rank) {
            drain.settled(r);
        }
    }

    private OutputRecord withSourceHolder(OutputRecord r) {
        Optional<OutputRecord> source = namespace.lookup(r.key());
        if (source.isEmpty()) {
            return r;
        }
        OutputRecord s = source.get();
        int holder = s.kind() == OutputRecord.Kind.FILE ? s.holderRank() : rank;
        return new OutputRecord(r.kind(), r.key(), r.target(), s.size(), s.mode(), r.mtimeNanos(), holder,
                s.objectId(), r.exclusive());
    }

    private boolean heldHere(Optional<OutputRecord> previous) {
        return previous.isPresent() && previous.get().kind() == OutputRecord.Kind.FILE
                && previous.get().holderRank() == rank;
    }
}
