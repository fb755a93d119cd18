package org.fanstore.runtime.output;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.util.Arrays;
import java.util.Objects;

/**
 * One change to the job's output namespace (files and directories the job created under the mount). The rank
 * that owns {@code key} ({@link OutputOwner#of}) decides whether it applies, then every rank applies it in the
 * order that owner decided, so two ranks never disagree about one path.
 *
 * <p>Keys are the same bytes as metadata-table keys: the path relative to the mount, no leading slash, no
 * {@code .}/{@code ..}/empty components.
 *
 * @param kind       what happens
 * @param key        the path it happens to (RENAME: the source)
 * @param target     RENAME only: the destination key; empty otherwise
 * @param size       FILE: its length in bytes; 0 otherwise
 * @param mode       FILE/DIR: st_mode bits including the S_IF type; 0 otherwise
 * @param mtimeNanos FILE/DIR: modification time, nanoseconds since the epoch
 * @param holderRank FILE (and RENAME of a file): the rank whose node-local storage holds the bytes
 * @param objectId   FILE: the id under which {@code holderRank} serves the bytes to other ranks
 * @param exclusive  FILE/DIR: fail with EEXIST when the key already exists (O_EXCL, mkdir)
 */
public record OutputRecord(Kind kind, byte[] key, byte[] target, long size, int mode, long mtimeNanos,
                           int holderRank, long objectId, boolean exclusive) {
    /** What a record does. Codes are wire values (MPJ messages): never renumber. */
    public enum Kind {
        FILE(1), DIR(2), UNLINK(3), RMDIR(4), RENAME(5);

        private final int code;

        Kind(int code) {
            this.code = code;
        }

        public int code() {
            return code;
        }

        public static Kind of(int code) {
            for (Kind k : values()) {
                if (k.code == code) {
                    return k;
                }
            }
            throw new IllegalArgumentException("unknown output record kind " + code);
        }
    }

    public OutputRecord {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(key, "key");
        target = target == null ? new byte[0] : target;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof OutputRecord r && kind == r.kind && Arrays.equals(key, r.key)
                && Arrays.equals(target, r.target) && size == r.size && mode == r.mode
                && mtimeNanos == r.mtimeNanos && holderRank == r.holderRank && objectId == r.objectId
                && exclusive == r.exclusive;
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, Arrays.hashCode(key), Arrays.hashCode(target), size, mode, mtimeNanos,
                holderRank, objectId, exclusive);
    }

    @Override
    public String toString() {
        return kind + " " + new String(key, UTF_8)
                + (target.length > 0 ? " -> " + new String(target, UTF_8) : "")
                + " size=" + size + " holder=" + holderRank + " id=" + objectId;
    }
}
