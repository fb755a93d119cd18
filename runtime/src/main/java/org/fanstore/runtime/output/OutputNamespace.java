package org.fanstore.runtime.output;

import java.util.Optional;

/**
 * One rank's view of the output namespace: what the shim on this node sees (through the shared-memory
 * journal) and what this rank checks when it owns a path. Thread-safe.
 */
public interface OutputNamespace {
    /**
     * Would {@code r} apply now? 0, or a positive errno: EEXIST (exclusive and present), ENOENT (parent or
     * source missing), ENOTDIR, EISDIR, ENOTEMPTY (RMDIR), EROFS (the key, or a RENAME's target, is an input).
     * Called by the owner of the key before it applies and broadcasts.
     */
    int check(OutputRecord r);

    /** Applies a decided record to this rank's view (and its shared-memory journal). Idempotent for FILE/DIR. */
    void apply(OutputRecord r);

    /**
     * This rank is publishing the file with inode {@code inode} as {@code objectId}: it serves that id only while
     * the file under the id's key is still that inode (a file replaced under the key is another one).
     */
    default void publishing(long objectId, long inode) {
    }

    /** The committed FILE or DIR record at {@code key}, if any. */
    Optional<OutputRecord> lookup(byte[] key);
}
