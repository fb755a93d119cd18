package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.table.MetadataTableDescriptor.FLAG_COMPRESSED;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.MAX_ATTRIBUTES;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.fanstore.prep.format.FileModes;

/**
 * A namespace as {@link MetadataTableWriter} takes it, column by column: the keys (each symlink's target right after
 * its key) in one {@link KeyArena}, every other field in a primitive array indexed by entry, and (mode, uid, gid) as
 * a u16 index into the distinct triples. Per entry ~51 bytes plus the key's bytes, where a {@link NamespaceEntry}
 * with its key array costs ~166 (prep/README.md "Memory"). Each entry is checked as it is added
 * ({@link NamespaceChecks}); {@link SortedNamespace} then reorders the columns by key.
 */
public final class NamespaceColumns {
    /** Internal flag bit: a directory the writer added because a key needed it (never written). */
    static final int SYNTHESIZED = 0x80;

    final int partitions;
    final int broadcastPartitions;
    final KeyArena arena = new KeyArena();
    int count;
    long[] keyAt;
    int[] keyLength;
    /** Index into {@link #triples} (mode, uid, gid), in order of first addition. */
    char[] attribute;
    /** st_size of a file, a symlink's target length, 0 for a directory. */
    long[] size;
    /** mtime in nanoseconds since the epoch. */
    long[] mtime;
    byte[] flags;
    int[] partition;
    long[] bodyOffset;
    /** A compressed body's stored length (checked below 4 GiB), else 0: what the entry records. */
    int[] storedLength;
    int[] crc;
    private int[] triples = new int[3 * 16];
    private final Map<Attr, Integer> attributes = new HashMap<>();

    /**
     * @param capacity            entries expected (the columns grow past it)
     * @param partitions          regular partitions; entries' partitions must lie in range
     * @param broadcastPartitions broadcast partitions
     */
    public NamespaceColumns(final int capacity, final int partitions, final int broadcastPartitions) {
        this.partitions = partitions;
        this.broadcastPartitions = broadcastPartitions;
        final int n = Math.max(1, capacity);
        keyAt = new long[n];
        keyLength = new int[n];
        attribute = new char[n];
        size = new long[n];
        mtime = new long[n];
        flags = new byte[n];
        partition = new int[n];
        bodyOffset = new long[n];
        storedLength = new int[n];
        crc = new int[n];
    }

    /** The columns of {@code entries} (the writer's one path for callers that build entry objects). */
    static NamespaceColumns of(final List<NamespaceEntry> entries, final int partitions,
        final int broadcastPartitions) {
        final NamespaceColumns c = new NamespaceColumns(entries.size() + 1, partitions, broadcastPartitions);
        for (final NamespaceEntry e : entries) {
            c.add(e.key(), e.mode(), e.size(), e.mtimeSec(), e.mtimeNsec(), e.uid(), e.gid(), e.flags(),
                e.partition(), e.linkTarget(), e.bodyOffset(), e.storedLength(), e.crc32c());
        }
        return c;
    }

    /**
     * Adds one entry; the fields mean what {@link NamespaceEntry}'s do (its codec is implied by the flags). The key
     * and link target are copied.
     *
     * @throws IllegalArgumentException naming the key, for an entry the table cannot hold
     */
    public void add(final byte[] key, final int mode, final long fileSize, final long mtimeSec, final int mtimeNsec,
        final int uid, final int gid, final int entryFlags, final int entryPartition, final byte[] linkTarget,
        final long entryBodyOffset, final long entryStoredLength, final int crc32c) {
        NamespaceChecks.checkEntry(key, mode, fileSize, mtimeSec, mtimeNsec, entryFlags, entryPartition, linkTarget,
            entryBodyOffset, entryStoredLength, partitions, broadcastPartitions);
        final int i = append(key, linkTarget, attributeOf(key, mode, uid, gid));
        size[i] = linkTarget != null ? linkTarget.length : FileModes.isDirectory(mode) ? 0 : fileSize;
        mtime[i] = mtimeSec * 1_000_000_000L + mtimeNsec;
        flags[i] = (byte)entryFlags;
        partition[i] = entryPartition;
        bodyOffset[i] = entryBodyOffset;
        storedLength[i] = (entryFlags & FLAG_COMPRESSED) != 0 ? (int)entryStoredLength : 0;
        crc[i] = crc32c;
    }

    /** Adds a directory no entry names (its mtime and owner are set by {@link #inherit}); returns its index. */
    int addSynthesized(final byte[] key) {
        final int i = append(key, null, (char)0);
        flags[i] = (byte)SYNTHESIZED;
        partition[i] = MetadataTableDescriptor.NO_PARTITION;
        return i;
    }

    /** Gives added directory {@code dir} the mtime, uid and gid of entry {@code from} (or the root's defaults). */
    void inherit(final int dir, final int from) {
        if (from < 0) {
            attribute[dir] = attributeOf(keyOf(dir), NamespaceEntry.DEFAULT_DIRECTORY_MODE, 0, 0);
            mtime[dir] = 0;
            return;
        }
        final int a = attribute[from];
        attribute[dir] = attributeOf(keyOf(dir), NamespaceEntry.DEFAULT_DIRECTORY_MODE, triples[3 * a + 1],
            triples[3 * a + 2]);
        mtime[dir] = mtime[from];
    }

    private int append(final byte[] key, final byte[] linkTarget, final char attr) {
        if (count == keyAt.length) {
            grow();
        }
        final int i = count++;
        keyAt[i] = arena.add(key, linkTarget);
        keyLength[i] = key.length;
        attribute[i] = attr;
        return i;
    }

    private char attributeOf(final byte[] key, final int mode, final int uid, final int gid) {
        final Attr a = new Attr(mode, uid, gid);
        final Integer known = attributes.get(a);
        if (known != null) {
            return (char)(int)known;
        }
        final int index = attributes.size();
        if (index == MAX_ATTRIBUTES) {
            throw new IllegalArgumentException(KeyText.of(key) + ": more than " + MAX_ATTRIBUTES
                + " distinct (mode, uid, gid) in the namespace, the most one table holds");
        }
        attributes.put(a, index);
        if (3 * index + 3 > triples.length) {
            triples = Arrays.copyOf(triples, 2 * triples.length);
        }
        triples[3 * index] = mode;
        triples[3 * index + 1] = uid;
        triples[3 * index + 2] = gid;
        return (char)index;
    }

    private record Attr(int mode, int uid, int gid) {
    }

    private void grow() {
        final int n = Math.max(16, count + (count >> 1));
        keyAt = Arrays.copyOf(keyAt, n);
        keyLength = Arrays.copyOf(keyLength, n);
        attribute = Arrays.copyOf(attribute, n);
        size = Arrays.copyOf(size, n);
        mtime = Arrays.copyOf(mtime, n);
        flags = Arrays.copyOf(flags, n);
        partition = Arrays.copyOf(partition, n);
        bodyOffset = Arrays.copyOf(bodyOffset, n);
        storedLength = Arrays.copyOf(storedLength, n);
        crc = Arrays.copyOf(crc, n);
    }

    /** Reorders every column so that entry k becomes the old entry {@code perm[k]}; trims them to the count. */
    void permute(final int[] perm) {
        final int n = count;
        final long[] at = new long[n];
        final int[] length = new int[n];
        for (int k = 0; k < n; k++) {
            at[k] = keyAt[perm[k]];
            length[k] = keyLength[perm[k]];
        }
        keyAt = at;
        keyLength = length;
        final char[] attr = new char[n];
        final byte[] flag = new byte[n];
        for (int k = 0; k < n; k++) {
            attr[k] = attribute[perm[k]];
            flag[k] = flags[perm[k]];
        }
        attribute = attr;
        flags = flag;
        size = permuted(size, perm, n);
        mtime = permuted(mtime, perm, n);
        bodyOffset = permuted(bodyOffset, perm, n);
        partition = permuted(partition, perm, n);
        storedLength = permuted(storedLength, perm, n);
        crc = permuted(crc, perm, n);
    }

    private static long[] permuted(final long[] column, final int[] perm, final int n) {
        final long[] out = new long[n];
        for (int k = 0; k < n; k++) {
            out[k] = column[perm[k]];
        }
        return out;
    }

    private static int[] permuted(final int[] column, final int[] perm, final int n) {
        final int[] out = new int[n];
        for (int k = 0; k < n; k++) {
            out[k] = column[perm[k]];
        }
        return out;
    }

    /** st_mode of entry i (an added directory's is 040755 before {@link #inherit} gives it its attribute). */
    int mode(final int i) {
        return (flags[i] & SYNTHESIZED) != 0 ? NamespaceEntry.DEFAULT_DIRECTORY_MODE : triples[3 * attribute[i]];
    }

    /** The distinct (mode, uid, gid) triples by attribute index. */
    int[] triples() {
        return triples;
    }

    int attributeCount() {
        return attributes.size();
    }

    boolean synthesized(final int i) {
        return (flags[i] & SYNTHESIZED) != 0;
    }

    /** The flags as the table records them (without {@link #SYNTHESIZED}). */
    int tableFlags(final int i) {
        return flags[i] & ~SYNTHESIZED;
    }

    byte[] chunk(final int i) {
        return arena.chunk(keyAt[i]);
    }

    int from(final int i) {
        return KeyArena.position(keyAt[i]);
    }

    /** A copy of key i (messages and the rare added directory). */
    byte[] keyOf(final int i) {
        final int from = from(i);
        return Arrays.copyOfRange(chunk(i), from, from + keyLength[i]);
    }

    /** Unsigned byte order of keys i and j. */
    int compareKeys(final int i, final int j) {
        final int a = from(i);
        final int b = from(j);
        return Arrays.compareUnsigned(chunk(i), a, a + keyLength[i], chunk(j), b, b + keyLength[j]);
    }
}
