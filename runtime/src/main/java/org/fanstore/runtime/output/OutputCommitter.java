package org.fanstore.runtime.output;

import java.time.Duration;

/**
 * Commits a record for the job: the key's owner checks it ({@link OutputNamespace#check}), and when it is
 * accepted every rank has applied it before this returns, so a reader anywhere sees it as soon as the writer's
 * close returns. One world: check and apply locally. Several: {@code ClusterCommitter} over MPJ.
 */
public interface OutputCommitter {
    /** 0 when applied everywhere, else a positive errno (EIO when the owner or a rank cannot be reached). */
    int commit(OutputRecord r, Duration timeout);
}
