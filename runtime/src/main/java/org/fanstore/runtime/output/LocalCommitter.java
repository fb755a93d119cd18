package org.fanstore.runtime.output;

import java.time.Duration;

/**
 * The committer of a world of one, and the step every rank's committer ends with: check, then apply, as one
 * atomic step (so two writers of one key cannot both pass the check).
 */
public final class LocalCommitter implements OutputCommitter {
    private final OutputNamespace namespace;

    public LocalCommitter(final OutputNamespace namespace) {
        this.namespace = namespace;
    }

    @Override
    public int commit(final OutputRecord r, final Duration timeout) {
        synchronized (namespace) {
            final int errno = namespace.check(r);
            if (errno == 0) {
                namespace.apply(r);
            }
            return errno;
        }
    }
}
