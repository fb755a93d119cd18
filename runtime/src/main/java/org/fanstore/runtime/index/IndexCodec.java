package org.fanstore.runtime.index;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.runtime.placement.IndexRecord;

/**
 * The bytes one rank contributes to the metadata all-gather (Java on both ends, so it is specified here only).
 * Little-endian: {@code u32 count}, then per record {@code u32 keyLen, key, u8 type, u8 codec, u32 mode,
 * u32 uid, u32 gid, i64 mtimeSec, u32 mtimeNsec, i64 rawLength, i64 storedLength, i64 bodyOffset, u32 crc32c,
 * i32 partition, u32 linkLen, link}: the fields of {@link PartitionEntry}, key as its path, in its order. A rank
 * that receives a malformed contribution names the sending rank.
 */
public final class IndexCodec {
    private static final int FIXED_BYTES = 4 + 1 + 1 + 4 + 4 + 4 + 8 + 4 + 8 + 8 + 8 + 4 + 4 + 4;

    private IndexCodec() {
    }

    public static byte[] encode(List<IndexRecord> records) {
        long total = 4;
        for (IndexRecord r : records) {
            total += FIXED_BYTES + r.key().length + linkLength(r);
        }
        if (total > Integer.MAX_VALUE - 16) {
            throw new IllegalStateException("this rank's index is " + total + " bytes, over the 2 GiB an MPJ"
                    + " message carries: use more ranks or fewer, larger files");
        }
        ByteBuffer out = ByteBuffer.allocate((int) total).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(records.size());
        for (IndexRecord r : records) {
            PartitionEntry e = r.entry();
            out.putInt(e.path().length).put(e.path());
            out.put((byte) e.type()).put((byte) e.codec());
            out.putInt(e.mode()).putInt(e.uid()).putInt(e.gid());
            out.putLong(e.mtimeSec()).putInt(e.mtimeNsec());
            out.putLong(e.rawLength()).putLong(e.storedLength()).putLong(e.bodyOffset());
            out.putInt(e.crc32c()).putInt(r.partition());
            out.putInt(linkLength(r));
            if (r.linkTarget() != null) {
                out.put(r.linkTarget());
            }
        }
        return out.array();
    }

    /** Decodes one rank's contribution; {@code fromRank} only names the culprit in errors. */
    public static List<IndexRecord> decode(byte[] bytes, int fromRank) {
        ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        try {
            int count = in.getInt();
            List<IndexRecord> out = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                byte[] key = new byte[in.getInt()];
                in.get(key);
                int type = in.get();
                int codec = in.get();
                int mode = in.getInt();
                int uid = in.getInt();
                int gid = in.getInt();
                long mtimeSec = in.getLong();
                int mtimeNsec = in.getInt();
                long raw = in.getLong();
                long stored = in.getLong();
                long offset = in.getLong();
                int crc = in.getInt();
                int partition = in.getInt();
                int linkLen = in.getInt();
                byte[] link = null;
                if (linkLen > 0 || type == PartitionDescriptor.TYPE_SYMLINK) {
                    link = new byte[linkLen];
                    in.get(link);
                }
                out.add(new IndexRecord(new PartitionEntry(key, type, codec, mode, uid, gid, mtimeSec, mtimeNsec,
                        raw, stored, offset, crc), partition, link));
            }
            if (in.hasRemaining()) {
                throw new IllegalStateException(in.remaining() + " trailing bytes");
            }
            return out;
        } catch (RuntimeException e) {
            throw new IllegalStateException("rank " + fromRank + " sent a malformed metadata index ("
                    + bytes.length + " bytes): " + e + "; are all ranks running the same fanstore version?", e);
        }
    }

    private static int linkLength(IndexRecord r) {
        return r.linkTarget() == null ? 0 : r.linkTarget().length;
    }
}
