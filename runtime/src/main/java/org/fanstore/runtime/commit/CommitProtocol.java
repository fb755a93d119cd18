package org.fanstore.runtime.commit;

import java.nio.ByteBuffer;
import java.util.Arrays;

import org.fanstore.runtime.output.OutputRecord;

/**
 * The output-commit wire layout (see {@link ClusterCommitter}), in one place. Big-endian on both ends.
 *
 * <p>Every request is one message of exactly {@link #MESSAGE_BYTES} on {@link MpiTags#COMMIT_REQUEST}: the
 * receiver posts one fixed-size receive without knowing the sender, and 8 KiB is far below the 512 KiB
 * protocol switch limit, so every commit message travels eagerly (no rendezvous round trip, none of niodev's
 * stalls with concurrent rendezvous messages). A key longer than {@link #MAX_KEY_BYTES} is refused with
 * ENAMETOOLONG before anything is sent. The answer is {@link #REPLY_BYTES} on the request's reply tag.
 */
final class CommitProtocol {
    /** What the message asks: {@link #OP_PROPOSE}, {@link #OP_APPLY} or {@link #OP_SHUTDOWN}. */
    static final int OP_OFFSET = 0;
    /** The rank that sent it and waits for the reply. */
    static final int SENDER_OFFSET = 4;
    /** The tag the sender posted its reply receive on. */
    static final int REPLY_TAG_OFFSET = 8;
    /** PROPOSE: how long the writer waits in all, so the owner can bound its broadcast within it. */
    static final int BUDGET_MILLIS_OFFSET = 12;
    /** The record: {@link OutputRecord.Kind#code()}. */
    static final int KIND_OFFSET = 16;
    static final int MODE_OFFSET = 20;
    static final int HOLDER_OFFSET = 24;
    /** 1 when exclusive, else 0. */
    static final int EXCLUSIVE_OFFSET = 28;
    static final int SIZE_OFFSET = 32;
    static final int MTIME_OFFSET = 40;
    static final int OBJECT_ID_OFFSET = 48;
    static final int KEY_LENGTH_OFFSET = 56;
    static final int TARGET_LENGTH_OFFSET = 60;
    /** The rank whose shim asked for the record (PROPOSE: the sender; APPLY: the proposer, not the owner). */
    static final int ORIGIN_OFFSET = 64;
    /** The key's bytes, then the target's, back to back. */
    static final int KEYS_OFFSET = 72;
    /** PATH_MAX: no path the shim can pass is longer. */
    static final int MAX_KEY_BYTES = 4096;
    static final int MESSAGE_BYTES = KEYS_OFFSET + 2 * MAX_KEY_BYTES;

    /** Writer to owner: decide this record and apply it everywhere. */
    static final int OP_PROPOSE = 1;
    /** Owner to every other rank: apply this decided record, then acknowledge. */
    static final int OP_APPLY = 2;
    /** A stopping rank to each peer: ends the peer's commit receiver. */
    static final int OP_SHUTDOWN = 3;

    /** Reply: 0 or a positive errno. */
    static final int REPLY_ERRNO_OFFSET = 0;
    /** Reply: the rank that did not acknowledge (when the errno is EIO because of it), else -1. */
    static final int REPLY_FAILED_RANK_OFFSET = 4;
    static final int REPLY_BYTES = 8;

    private CommitProtocol() {
    }

    /** A decoded request. */
    record Message(int op, int sender, int replyTag, int budgetMillis, int origin, OutputRecord record) {
    }

    static boolean fits(OutputRecord r) {
        return r.key().length <= MAX_KEY_BYTES && r.target().length <= MAX_KEY_BYTES;
    }

    static byte[] encode(int op, int sender, int replyTag, int budgetMillis, int origin, OutputRecord r) {
        byte[] bytes = new byte[MESSAGE_BYTES];
        ByteBuffer b = ByteBuffer.wrap(bytes)
                .putInt(OP_OFFSET, op).putInt(SENDER_OFFSET, sender).putInt(REPLY_TAG_OFFSET, replyTag)
                .putInt(BUDGET_MILLIS_OFFSET, budgetMillis).putInt(ORIGIN_OFFSET, origin);
        if (r != null) {
            b.putInt(KIND_OFFSET, r.kind().code()).putInt(MODE_OFFSET, r.mode()).putInt(HOLDER_OFFSET, r.holderRank())
                    .putInt(EXCLUSIVE_OFFSET, r.exclusive() ? 1 : 0).putLong(SIZE_OFFSET, r.size())
                    .putLong(MTIME_OFFSET, r.mtimeNanos()).putLong(OBJECT_ID_OFFSET, r.objectId())
                    .putInt(KEY_LENGTH_OFFSET, r.key().length).putInt(TARGET_LENGTH_OFFSET, r.target().length);
            System.arraycopy(r.key(), 0, bytes, KEYS_OFFSET, r.key().length);
            System.arraycopy(r.target(), 0, bytes, KEYS_OFFSET + r.key().length, r.target().length);
        }
        return bytes;
    }

    /** @throws IllegalArgumentException on a malformed message (a peer from another build) */
    static Message decode(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        int op = b.getInt(OP_OFFSET);
        OutputRecord r = null;
        if (op != OP_SHUTDOWN) {
            int keyLength = b.getInt(KEY_LENGTH_OFFSET);
            int targetLength = b.getInt(TARGET_LENGTH_OFFSET);
            if (keyLength < 0 || keyLength > MAX_KEY_BYTES || targetLength < 0 || targetLength > MAX_KEY_BYTES) {
                throw new IllegalArgumentException("commit message with key lengths " + keyLength + "/" + targetLength);
            }
            byte[] key = Arrays.copyOfRange(bytes, KEYS_OFFSET, KEYS_OFFSET + keyLength);
            byte[] target = Arrays.copyOfRange(bytes, KEYS_OFFSET + keyLength, KEYS_OFFSET + keyLength + targetLength);
            r = new OutputRecord(OutputRecord.Kind.of(b.getInt(KIND_OFFSET)), key, target, b.getLong(SIZE_OFFSET),
                    b.getInt(MODE_OFFSET), b.getLong(MTIME_OFFSET), b.getInt(HOLDER_OFFSET),
                    b.getLong(OBJECT_ID_OFFSET), b.getInt(EXCLUSIVE_OFFSET) != 0);
        }
        return new Message(op, b.getInt(SENDER_OFFSET), b.getInt(REPLY_TAG_OFFSET), b.getInt(BUDGET_MILLIS_OFFSET),
                b.getInt(ORIGIN_OFFSET), r);
    }

    static byte[] reply(int errno, int failedRank) {
        return ByteBuffer.allocate(REPLY_BYTES).putInt(REPLY_ERRNO_OFFSET, errno)
                .putInt(REPLY_FAILED_RANK_OFFSET, failedRank).array();
    }

    static int replyErrno(byte[] reply) {
        return ByteBuffer.wrap(reply).getInt(REPLY_ERRNO_OFFSET);
    }

    static int replyFailedRank(byte[] reply) {
        return ByteBuffer.wrap(reply).getInt(REPLY_FAILED_RANK_OFFSET);
    }
}
