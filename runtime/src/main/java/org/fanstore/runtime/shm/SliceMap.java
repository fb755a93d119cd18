package org.fanstore.runtime.shm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * {@code slices.map}: which table entries the shim may read straight from a partition copy on this node, and where
 * (docs/slices.md). Specification: runtime/src/main/java/org/fanstore/runtime/shm/README.md ("slices.map"); golden
 * image {@code tests/vectors/slices/slices-map-1.bin}, checked here and by the shim's test_slice_view.c.
 *
 * <p>The shim reads with acquire loads and no lock, so the order of stores is the protocol: a slot's path bytes,
 * then its length (ordered store); an entry's offset, then its slot word (ordered store), and only after its slot.
 * Published records never change. Writers may race (the background pass, open workers, the puller): a slot is
 * published under this object's lock, an entry by whichever writer gets there, with the same values.
 *
 * <p>Each slot also has a {@link Layout}, kept here only: whether its entries' offsets are into a partition copy
 * (or a byte-identical pull file) or into a decoded copy. A slot answers only publications of its own layout, so an
 * offset is never published against a file of the other layout, whichever writer named the slot first.
 *
 * <p>Mapped for the runtime's life and never unmapped by hand (see {@code ReferenceBits}).
 */
public final class SliceMap {
    public static final byte[] MAGIC = "FANSSLIC".getBytes(StandardCharsets.US_ASCII);
    public static final int VERSION = 1;
    public static final int HEADER_BYTES = 32;
    public static final int SLOT_BYTES = 256;
    public static final int PATH_MAX = 252;
    public static final int ENTRY_BYTES = 16;

    private final UnsafeBuffer map;
    private final int slots;
    private final int entries;
    private final Layout[] slotLayout;
    private final boolean[] slotRefused;

    private SliceMap(MappedByteBuffer mapped, int slots, int entries) {
        this.map = new UnsafeBuffer(mapped);
        this.slots = slots;
        this.entries = entries;
        this.slotLayout = new Layout[slots];
        this.slotRefused = new boolean[slots];
    }

    /** File length for these counts. */
    public static long length(int slots, int entries) {
        return HEADER_BYTES + (long) slots * SLOT_BYTES + (long) entries * ENTRY_BYTES;
    }

    /** Creates {@code path} (mode 0600, nothing published, replacing a stale file) and maps it. */
    public static SliceMap create(Path path, int slots, int entries) throws IOException {
        if (slots < 0 || entries <= 0 || length(slots, entries) > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("slices.map for " + slots + " partitions and " + entries
                    + " entries does not fit one mapping");
        }
        Files.deleteIfExists(path);
        try (FileChannel channel = FileChannel.open(path,
                Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            header.put(MAGIC).putInt(VERSION).putInt(slots).putLong(entries).putLong(0).flip();
            channel.write(header, 0);
            long total = length(slots, entries);
            channel.write(ByteBuffer.allocate(1), total - 1);   // sizes the file; the records stay sparse zeros
            return new SliceMap(channel.map(FileChannel.MapMode.READ_WRITE, 0, total), slots, entries);
        }
    }

    public int slots() {
        return slots;
    }

    /** What a slot's offsets point into. */
    public enum Layout {
        /** A partition copy, or a pull file of the same bytes: offsets are body offsets. */
        PARTITION,
        /** A decoded copy of a compressed partition (DecodedArenas): offsets are into its raw layout. */
        DECODED
    }

    /**
     * Publishes entry {@code index}: its raw body starts at {@code offset} in {@code file}, of {@code layout}, the
     * file of slot {@code slot}. False (nothing published) when the path is longer than {@link #PATH_MAX} bytes or
     * the slot was published with the other layout.
     */
    public boolean publish(int index, int slot, Path file, long offset, Layout layout) {
        if (index < 0 || index >= entries || slot < 0 || slot >= slots || offset < 0) {
            throw new IllegalArgumentException("entry " + index + " slot " + slot + " offset " + offset
                    + " outside a map of " + entries + " entries and " + slots + " slots");
        }
        if (!publishSlot(slot, file, layout)) {
            return false;
        }
        int at = HEADER_BYTES + slots * SLOT_BYTES + index * ENTRY_BYTES;
        if (map.getIntVolatile(at) == 0) {
            map.putLong(at + 8, offset, ByteOrder.LITTLE_ENDIAN);
            map.putIntOrdered(at, slot + 1);   // the little-endian int the shim loads with acquire
        }
        return true;
    }

    /** Whether entry index is published. */
    public boolean published(int index) {
        return map.getIntVolatile(HEADER_BYTES + slots * SLOT_BYTES + index * ENTRY_BYTES) != 0;
    }

    /**
     * Publishes slot {@code slot} as {@code file}, of {@code layout} (once; later calls of the same layout answer the
     * first one's outcome, later calls of the other layout false). False when the path is longer than
     * {@link #PATH_MAX} bytes: none of that partition's entries can be slices then, and callers learn it before
     * checking any body.
     */
    public synchronized boolean publishSlot(int slot, Path file, Layout layout) {
        if (slotLayout[slot] != null) {
            return slotLayout[slot] == layout;
        }
        if (slotRefused[slot]) {
            return false;
        }
        byte[] path = file.toAbsolutePath().toString().getBytes(StandardCharsets.UTF_8);
        if (path.length == 0 || path.length > PATH_MAX) {
            slotRefused[slot] = true;
            return false;
        }
        int at = HEADER_BYTES + slot * SLOT_BYTES;
        map.putBytes(at + 4, path);
        map.putIntOrdered(at, path.length);
        slotLayout[slot] = layout;
        return true;
    }

    /** Whether slot {@code slot} names a file yet (of either layout). */
    public synchronized boolean slotPublished(int slot) {
        return slotLayout[slot] != null;
    }
}
