package org.fanstore.runtime.output;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/** Readable bytes of committed outputs this rank holds; files held elsewhere need the cluster's OutputData. */
public final class LocalOutputData implements OutputData {
    private final LocalOutputNamespace namespace;
    private final int rank;

    public LocalOutputData(final LocalOutputNamespace namespace, final int rank) {
        this.namespace = namespace;
        this.rank = rank;
    }

    @Override
    public Path readable(final OutputRecord file, final Duration timeout) throws IOException {
        if (file.holderRank() != rank) {
            throw new IOException("output " + file + " is held by rank " + file.holderRank());
        }
        return namespace.heldFile(file.objectId());
    }
}
