package org.fanstore.runtime.slices;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import org.fanstore.prep.format.FileModes;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.runtime.shm.SliceMap;
import org.fanstore.runtime.placement.BodyIndex;
import org.fanstore.runtime.placement.BodyCheck;
import org.fanstore.runtime.placement.LocalPartitions;

/**
 * Decides which entries the shim may read as slices of a partition copy and publishes them in {@link SliceMap}
 * (docs/slices.md): a regular file stored uncompressed, in a partition copy this node holds (its own, or one the
 * fill has completed), whose body has passed its CRC32C check ({@link BodyCheck}). A body that fails is never
 * published: its opens keep getting EIO. With {@code enabled} false (--unpack eager) nothing is published.
 *
 * <p>Callers: the fill's publish thread for a partition just completed ({@link #publishPulled}), and an open the shim
 * sent with the slice flag before that got there. They may race on one entry: the check runs at most once per
 * entry (BodyCheck remembers), and both publish the same record.
 */
public final class SlicePublisher implements AutoCloseable {
    private final MetadataTable table;
    private final BodyIndex bodies;
    private final LocalPartitions local;
    private final BodyCheck check;
    private final SliceMap map;
    private final int regularPartitions;
    private final boolean enabled;
    private final AtomicBoolean warnedLongPath = new AtomicBoolean();
    private volatile boolean closed;
    private volatile DecodedArenas arenas;

    public SlicePublisher(MetadataTable table, BodyIndex bodies, LocalPartitions local, BodyCheck check, SliceMap map,
                          int regularPartitions, boolean enabled) {
        this.table = table;
        this.bodies = bodies;
        this.local = local;
        this.check = check;
        this.map = map;
        this.regularPartitions = regularPartitions;
        this.enabled = enabled;
    }

    /**
     * From now on the entries of partitions with a decoded copy are published as slices of that copy, decoded first
     * (every entry of such a partition: the map has one path per partition).
     */
    public void attach(DecodedArenas decoded) {
        this.arenas = decoded;
    }

    /**
     * Whether entry index can be a slice now: its partition copy is here and its body is stored raw, or its
     * partition has a decoded copy.
     */
    public boolean publishable(int index) {
        if (!enabled || index < 0 || index >= bodies.entries()) {
            return false;
        }
        int p = bodies.partition(index);
        if (p == BodyIndex.NO_BODY || !FileModes.isRegular(table.mode(index)) || !local.holds(p)
                || slot(p) >= map.slots()) {
            return false;
        }
        DecodedArenas a = arenas;
        return bodies.codec(index) == PartitionDescriptor.CODEC_RAW || a != null && a.covers(p);
    }

    /** Whether entry index is served from its partition's decoded copy rather than the partition copy. */
    public boolean decoded(int index) {
        DecodedArenas a = arenas;
        int p = bodies.partition(index);
        return a != null && p != BodyIndex.NO_BODY && a.covers(p);
    }

    /**
     * Checks and publishes entry index. True when it is published (now or before); false when it cannot be a slice.
     * Throws CorruptBodyException (logged once by BodyCheck) for a body that fails its check.
     */
    public boolean publish(int index) throws IOException {
        return publishFor(index) != NOT_SLICE;
    }

    /** {@link #publishFor}: cannot be a slice. */
    public static final int NOT_SLICE = 0;
    /** {@link #publishFor}: published, and this call read none of its body (published before, or by another call). */
    public static final int SLICE = 1;
    /** {@link #publishFor}: published after this call decoded it (or copied it, raw) into the decoded copy. */
    public static final int DECODED_SLICE = 2;
    /** {@link #publishFor}: published after this call read its body in the partition copy to check its CRC32C. */
    public static final int CHECKED_SLICE = 3;

    /**
     * {@link #publish}, saying what this call read: an open's statistics count a decode as one, and a body read to
     * check it as the bytes the runtime read; an entry published before this call cost it nothing.
     */
    public int publishFor(int index) throws IOException {
        if (map.published(index)) {
            return SLICE;
        }
        if (!publishable(index)) {
            return NOT_SLICE;
        }
        int p = bodies.partition(index);
        DecodedArenas a = arenas;
        boolean fromDecoded = a != null && a.covers(p);
        Path copy = fromDecoded ? a.path(p) : local.file(p);
        SliceMap.Layout layout = fromDecoded ? SliceMap.Layout.DECODED : SliceMap.Layout.PARTITION;
        if (!map.publishSlot(slot(p), copy, layout)) {
            // the copy's path does not fit the map, or (a pulled partition just given a decoded copy) the slot names
            // the other layout: no body check spent on an entry never sliced
            if (tooLong(copy) && !warnedLongPath.getAndSet(true)) {
                System.err.println("fanstore: the partition copy " + copy + " has a path longer than "
                        + SliceMap.PATH_MAX + " bytes, so its files are copied out on first open (slower); a"
                        + " shorter --local-dir avoids it");
            }
            return NOT_SLICE;
        }
        if (fromDecoded) {
            int got = a.ensure(index);
            if (got == DecodedArenas.UNSERVED || !map.publish(index, slot(p), copy, a.offset(index), layout)) {
                return NOT_SLICE;
            }
            return got == DecodedArenas.DECODED ? DECODED_SLICE : SLICE;
        }
        boolean read = check.verify(index);
        if (!map.publish(index, slot(p), copy, bodies.bodyOffset(index), layout)) {
            return NOT_SLICE;
        }
        return read ? CHECKED_SLICE : SLICE;
    }

    /**
     * Publishes entry index, stored raw, as a slice of {@code copy}: a byte-identical copy of its partition that is
     * not (yet) this node's local copy, whose bytes of this entry the caller has checked against its CRC32C (a pull
     * file a reader rides, Fill#sliceablePath). False when it cannot be a slice; the partition's slot keeps
     * the first path published for it, which names the same bytes.
     */
    public boolean publishCopy(int index, Path copy) {
        if (map.published(index)) {
            return true;
        }
        int p = bodies.partition(index);
        if (!enabled || p == BodyIndex.NO_BODY || bodies.codec(index) != PartitionDescriptor.CODEC_RAW
                || !FileModes.isRegular(table.mode(index)) || slot(p) >= map.slots() || decoded(index)) {
            return false;
        }
        if (tooLong(copy)) {
            return false;   // a longer name than the copy's own: the slot stays free for that one
        }
        return map.publish(index, slot(p), copy, bodies.bodyOffset(index), SliceMap.Layout.PARTITION);
    }

    /**
     * Whether partition p, kept and still filling, has a decoded copy its readers can ride (docs/slices.md,
     * "compressed riders"), making it now if it holds compressed entries, the room is there and no raw rider named
     * the fill file in its slot first.
     */
    public boolean riderCopy(int p) {
        addDecodedCopy(p);
        DecodedArenas a = arenas;
        return enabled && a != null && a.covers(p);
    }

    /**
     * A reader's open of entry index, of a partition still filling that has a decoded copy ({@link #riderCopy}),
     * whose body's ranges landed in {@code filled}: decodes (or copies) it from there into that copy, checks its
     * CRC32C on the decoded bytes and publishes it as a slice of the copy. {@link #NOT_SLICE} when it cannot be one
     * now (the caller's usual path serves it); {@link #DECODED_SLICE} when this call decoded it.
     */
    public int publishRider(int index, FileChannel filled) throws IOException {
        if (map.published(index)) {
            return SLICE;
        }
        int p = bodies.partition(index);
        DecodedArenas a = arenas;
        if (!enabled || a == null || p == BodyIndex.NO_BODY || !FileModes.isRegular(table.mode(index))
                || slot(p) >= map.slots() || !a.covers(p)) {
            return NOT_SLICE;
        }
        int got = a.ensure(index, filled);
        if (got == DecodedArenas.UNSERVED
                || !map.publish(index, slot(p), a.path(p), a.offset(index), SliceMap.Layout.DECODED)) {
            return NOT_SLICE;
        }
        return got == DecodedArenas.DECODED ? DECODED_SLICE : SLICE;
    }

    private static boolean tooLong(Path copy) {
        return copy.toAbsolutePath().toString().getBytes(StandardCharsets.UTF_8).length > SliceMap.PATH_MAX;
    }

    /**
     * The fill's hook for partition p, just completed. A partition with compressed entries first gets a decoded copy
     * if {@link DecodedArenas#addPulled} finds the room and its slot still names nothing (a rider may have published
     * raw entries from the pull file: then its LZ4 files keep the per-open path). Then every entry is published as
     * by {@link #publishPartition}, which decodes them into that copy here, on the fill's publish thread, so
     * later opens read them as slices instead of decoding each open into the cache.
     */
    public int publishPulled(int p) {
        addDecodedCopy(p);
        return publishPartition(p);
    }

    /**
     * Gives partition p, just completed, its decoded copy (if it holds compressed entries and the room is there)
     * without publishing its entries: --unpack lazy, where each entry is checked and published on its first open.
     */
    public void addDecodedCopy(int p) {
        DecodedArenas a = arenas;
        int slot = slot(p);
        if (enabled && a != null && slot < map.slots() && !map.slotPublished(slot)) {
            a.addPulled(p, copy -> map.publishSlot(slot, copy, SliceMap.Layout.DECODED));
        }
    }

    /** Publishes the entries of partition p (just added by the fill); returns how many. */
    public int publishPartition(int p) {
        int count = 0;
        for (int i = 0; i < bodies.entries() && !closed; i++) {
            if (bodies.partition(i) == p) {
                count += publishQuietly(i);
            }
        }
        return count;
    }

    /** 1 if entry i is published now and was not before, else 0; a corrupt body is skipped, not fatal. */
    private int publishQuietly(int i) {
        try {
            return !map.published(i) && publish(i) ? 1 : 0;
        } catch (IOException e) {
            return 0;   // CorruptBodyException: BodyCheck named it in the log; the other files are still good
        }
    }

    /** The map's slot of partition id p: regular partitions first, then broadcast ones. */
    private int slot(int p) {
        return p >= 0 ? p : regularPartitions + (-1 - p);
    }

    /** Makes every publishing loop stop at its next entry (the job is ending); returns at once, waits for none. */
    public void stopPublishing() {
        closed = true;
    }

    /** As {@link #stopPublishing}: a partition being published stops at its next entry; this does not wait for it. */
    @Override
    public void close() {
        closed = true;
    }
}
