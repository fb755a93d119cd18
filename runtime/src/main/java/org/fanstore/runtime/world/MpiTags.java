package org.fanstore.runtime.world;

/**
 * Every MPI tag fanstore uses on COMM_WORLD, in one place so the ranges cannot overlap.
 *
 * <p>MPJ 0.44 reports {@code TAG_UB = Integer.MAX_VALUE} for niodev, and its own collectives on the same
 * communicator use tags 999, 1000, 1110, 16384, 34001-34013, 35000 and 65535 (constants in
 * {@code mpi.PureIntracomm}; {@code MPI.Finalize} runs one of those barriers). Everything here sits above
 * 2^19, clear of them.
 */
public final class MpiTags {
    /** Remote-fetch requests; the dispatcher receives only on this tag (an ANY_TAG receive would steal replies). */
    public static final int FETCH_REQUEST = 1 << 19;

    /** Output-commit requests (proposals to an owner, applies from it, shutdown): {@link ClusterCommitter}'s
     * receiver receives only on this tag. */
    public static final int COMMIT_REQUEST = FETCH_REQUEST + 1;

    /** The metadata table's broadcast: its header message ({@link TableBroadcast}). */
    public static final int TABLE_HEADER = FETCH_REQUEST + 2;

    /** The metadata table's verdict, after its last chunk ({@link TableBroadcast}). */
    public static final int TABLE_TRAILER = FETCH_REQUEST + 3;

    /** The table's chunks: chunk k on TABLE_CHUNK_FIRST + k (a 2 GiB table is ~4,200 chunks), clear of the
     * collectives below 2^21 and the reply tags from 2^24. */
    public static final int TABLE_CHUNK_FIRST = 1 << 22;
    public static final int TABLE_CHUNK_LIMIT = 1 << 23;

    /** Collectives of {@link MpiWorld}: two tags per operation, the epoch keeps a late message of one
     * operation from matching the next. */
    public static final int COLLECTIVE_BASE = 1 << 20;
    public static final int COLLECTIVE_EPOCHS = 1 << 16;

    /** Remote-fetch reply tags: one per in-flight request, handed out round robin. At 2^30 - 2^24 tags, a
     * tag comes back only after a billion requests, long after any abandoned receive on it stopped mattering. */
    public static final int REPLY_FIRST = 1 << 24;
    public static final int REPLY_LIMIT = 1 << 30;

    /** Output-commit reply tags: their own range, so a commit reply never matches a fetch reply's receive
     * posted by the same pair of ranks. */
    public static final int COMMIT_REPLY_FIRST = REPLY_LIMIT;
    public static final int COMMIT_REPLY_LIMIT = Integer.MAX_VALUE;

    private MpiTags() {
    }

    public static int collectiveLengths(int epoch) {
        return COLLECTIVE_BASE + 2 * (epoch % COLLECTIVE_EPOCHS);
    }

    public static int collectiveData(int epoch) {
        return collectiveLengths(epoch) + 1;
    }

    public static int commitReply(long sequence) {
        return COMMIT_REPLY_FIRST + (int) Long.remainderUnsigned(sequence, COMMIT_REPLY_LIMIT - COMMIT_REPLY_FIRST);
    }

    public static int reply(long sequence) {
        return REPLY_FIRST + (int) Long.remainderUnsigned(sequence, REPLY_LIMIT - REPLY_FIRST);
    }
}
