package org.fanstore.prep.format.table;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.fanstore.prep.format.FileModes;

/**
 * A namespace in key order ({@link BreadthFirstNamespace} then puts it in the table's order): keys checked, sorted
 * by unsigned bytes, duplicates refused, the root and every missing ancestor directory added (with the mtime and
 * owner of their newest child), and the parent/children links resolved, in primitive arrays indexed by key order.
 */
final class SortedNamespace {
    private static final Comparator<NamespaceEntry> KEY_ORDER = (a, b) -> Arrays.compareUnsigned(a.key(), b.key());
    private static final byte[] ROOT_KEY = new byte[0];
    /** mtimes are stored as signed 64-bit nanoseconds: seconds within +-(2^63 - 1) / 10^9, less one for nsec. */
    private static final long MAX_MTIME_SEC = Long.MAX_VALUE / 1_000_000_000L - 1;
    private static final long MIN_MTIME_SEC = -MAX_MTIME_SEC;

    final NamespaceEntry[] entries;
    /** True for directories this class added because a key needed them. */
    final boolean[] synthesized;
    /** Each key's FNV-1a 64 hash (the index's buckets are dropped once the parents are linked). */
    final long[] hashes;
    final int[] parent;
    /** Where each directory's run starts in {@link #children}; null with it after {@link #releaseChildren}. */
    int[] firstChild;
    final int[] childCount;
    /** Children of every directory, contiguous per directory, each run in name order. */
    int[] children;

    private SortedNamespace(final NamespaceEntry[] entries, final boolean[] synthesized, final KeyHashIndex index) {
        this.entries = entries;
        this.synthesized = synthesized;
        this.hashes = index.hashes();
        final int n = entries.length;
        parent = new int[n];
        firstChild = new int[n];
        childCount = new int[n];
        children = new int[n - 1];
        link(index);
        inheritNewestChild();
    }

    /** Drops {@link #children} and {@link #firstChild} once the breadth-first order is made (8 B per entry). */
    void releaseChildren() {
        children = null;
        firstChild = null;
    }

    /**
     * Gives each added directory the mtime, uid and gid of its newest child (ties: the child last in name order).
     * Children sort after their parent, so walking entries backwards settles a directory before its parent looks.
     */
    private void inheritNewestChild() {
        final boolean[] inherited = new boolean[entries.length];
        for (int i = entries.length - 1; i > 0; i--) {
            final int p = parent[i];
            if (!synthesized[p]) {
                continue;
            }
            final NamespaceEntry child = entries[i];
            final NamespaceEntry dir = entries[p];
            if (!inherited[p] || child.mtimeSec() > dir.mtimeSec() ||
                (child.mtimeSec() == dir.mtimeSec() && child.mtimeNsec() > dir.mtimeNsec())) {
                inherited[p] = true;
                entries[p] = new NamespaceEntry(dir.key(), dir.mode(), 0, child.mtimeSec(), child.mtimeNsec(),
                    child.uid(), child.gid(), 0, MetadataTableDescriptor.NO_PARTITION, null, 0, 0, 0, 0);
            }
        }
    }

    static SortedNamespace of(final List<NamespaceEntry> given, final int partitions, final int broadcastPartitions) {
        NamespaceEntry[] sorted = given.toArray(new NamespaceEntry[0]);
        for (final NamespaceEntry e : sorted) {
            checkEntry(e, partitions, broadcastPartitions);
        }
        Arrays.sort(sorted, KEY_ORDER);
        for (int i = 1; i < sorted.length; i++) {
            if (Arrays.equals(sorted[i - 1].key(), sorted[i].key())) {
                throw new IllegalArgumentException("duplicate key in namespace: " + KeyText.of(sorted[i].key()));
            }
        }
        boolean[] added = new boolean[sorted.length];
        if (sorted.length == 0 || sorted[0].key().length != 0) {
            // The root sorts first; a dataset's entries never name it (the mount holds the datasets), and adding it
            // here spares building the hash index twice when it is the only missing directory.
            final NamespaceEntry[] withRoot = new NamespaceEntry[sorted.length + 1];
            withRoot[0] = NamespaceEntry.directory(ROOT_KEY, 0);
            System.arraycopy(sorted, 0, withRoot, 1, sorted.length);
            sorted = withRoot;
            added = new boolean[sorted.length];
            added[0] = true;
        }
        KeyHashIndex index = KeyHashIndex.build(keysOf(sorted));
        final List<NamespaceEntry> missing = missingDirectories(sorted, index);
        if (missing.isEmpty()) {
            return new SortedNamespace(sorted, added, index);
        }
        missing.sort(KEY_ORDER);
        final NamespaceEntry[] merged = new NamespaceEntry[sorted.length + missing.size()];
        final boolean[] synthesized = new boolean[merged.length];
        for (int i = 0, a = 0, b = 0; i < merged.length; i++) {
            final boolean takeMissing = a == sorted.length ||
                (b < missing.size() && KEY_ORDER.compare(missing.get(b), sorted[a]) < 0);
            synthesized[i] = takeMissing || added[a];
            merged[i] = takeMissing ? missing.get(b++) : sorted[a++];
        }
        index = KeyHashIndex.build(keysOf(merged));
        return new SortedNamespace(merged, synthesized, index);
    }

    /** Length of key's parent key: up to its last '/', or 0 (the root) for a top-level key. */
    static int parentLength(final byte[] key) {
        return parentLength(key, key.length);
    }

    /** Parent length of the key {@code key[0 .. length)}. */
    static int parentLength(final byte[] key, final int length) {
        for (int i = length - 1; i >= 0; i--) {
            if (key[i] == '/') {
                return i;
            }
        }
        return 0;
    }

    private static byte[][] keysOf(final NamespaceEntry[] entries) {
        final byte[][] keys = new byte[entries.length][];
        for (int i = 0; i < entries.length; i++) {
            keys[i] = entries[i].key();
        }
        return keys;
    }

    /**
     * Ancestors no entry names, each once, as 040755 directories. Their times and owners are placeholders: the
     * writer gives each the mtime, uid and gid of its newest child, so every rank derives the same values.
     */
    private static List<NamespaceEntry> missingDirectories(final NamespaceEntry[] sorted, final KeyHashIndex index) {
        final List<NamespaceEntry> missing = new ArrayList<>();
        final Set<ByteBuffer> added = new HashSet<>();
        if (index.find(ROOT_KEY, 0) < 0) {
            missing.add(NamespaceEntry.directory(ROOT_KEY, 0));
            added.add(ByteBuffer.wrap(ROOT_KEY));
        }
        final ParentCache parents = new ParentCache(index);
        for (final NamespaceEntry e : sorted) {
            final byte[] key = e.key();
            if (key.length == 0) {
                continue;
            }
            for (int length = parentLength(key); ; length = parentLength(key, length)) {
                final int found = parents.find(key, length);
                if (found >= 0) {
                    if (!FileModes.isDirectory(sorted[found].mode())) {
                        throw new IllegalArgumentException(
                            KeyText.of(sorted[found].key()) + " is not a directory but has " + KeyText.of(key) +
                            " below it");
                    }
                    break;
                }
                final byte[] ancestor = Arrays.copyOf(key, length);
                if (!added.add(ByteBuffer.wrap(ancestor))) {
                    break;
                }
                missing.add(NamespaceEntry.directory(ancestor, 0));
                if (length == 0) {
                    break;
                }
            }
        }
        return missing;
    }

    private void link(final KeyHashIndex index) {
        final int n = entries.length;
        final ParentCache parents = new ParentCache(index);
        for (int i = 1; i < n; i++) {
            final byte[] key = entries[i].key();
            final int p = parents.find(key, parentLength(key));
            parent[i] = p;
            childCount[p]++;
        }
        int next = 0;
        for (int i = 0; i < n; i++) {
            if (FileModes.isDirectory(entries[i].mode())) {
                firstChild[i] = next;
                next += childCount[i];
            }
        }
        // Ascending entry order within one parent is name order: siblings share the "<parent>/" prefix.
        final int[] fill = firstChild.clone();
        for (int i = 1; i < n; i++) {
            children[fill[parent[i]]++] = i;
        }
    }

    /**
     * Parent lookups in key order: a directory's files come one after another, so most keys have the same parent as
     * the key before them, found by comparing the prefix instead of hashing and probing again.
     */
    private static final class ParentCache {
        private final KeyHashIndex index;
        private byte[] lastKey;
        private int lastLength = -1;
        private int lastFound;

        ParentCache(final KeyHashIndex index) {
            this.index = index;
        }

        int find(final byte[] key, final int length) {
            if (length == lastLength && Arrays.equals(key, 0, length, lastKey, 0, length)) {
                return lastFound;
            }
            final int found = index.find(key, length);
            lastKey = key;
            lastLength = length;
            lastFound = found;
            return found;
        }
    }

    private static void checkEntry(final NamespaceEntry e, final int partitions, final int broadcastPartitions) {
        final byte[] key = e.key();
        if (key == null) {
            throw new IllegalArgumentException("namespace entry without a key");
        }
        checkKey(key);
        if (e.mtimeNsec() < 0 || e.mtimeNsec() > 999_999_999) {
            throw new IllegalArgumentException(KeyText.of(key) + ": mtime nanoseconds " + e.mtimeNsec());
        }
        if (e.mtimeSec() < MIN_MTIME_SEC || e.mtimeSec() > MAX_MTIME_SEC) {
            throw new IllegalArgumentException(KeyText.of(key) + ": mtime " + e.mtimeSec() + " s is outside the years "
                + "1678-2262 the table holds (64-bit nanoseconds); touch the file and prep again");
        }
        if (FileModes.isRegular(e.mode()) && (e.size() < 0 || e.size() > MetadataTableDescriptor.MAX_U48 ||
            e.bodyOffset() < 0 || e.bodyOffset() > MetadataTableDescriptor.MAX_U48)) {
            throw new IllegalArgumentException(KeyText.of(key) + ": size " + e.size() + " or body offset "
                + e.bodyOffset() + " beyond the 2^48 bytes the table holds");
        }
        if ((e.flags() & MetadataTableDescriptor.FLAG_COMPRESSED) != 0 && (e.storedLength() >>> 32) != 0) {
            throw new IllegalArgumentException(KeyText.of(key) + ": compressed body of " + e.storedLength()
                + " bytes, the table holds below 4 GiB (prep stores larger bodies raw)");
        }
        if ((e.flags() & ~(MetadataTableDescriptor.FLAG_UNPACKABLE | MetadataTableDescriptor.FLAG_COMPRESSED)) != 0
            || (!FileModes.isRegular(e.mode()) && e.flags() != 0)) {
            throw new IllegalArgumentException(KeyText.of(key) + ": flags " + e.flags() + " on mode 0"
                + Integer.toOctalString(e.mode()));
        }
        final int p = e.partition();
        final boolean inRange = FileModes.isRegular(e.mode())
            ? (p >= 0 ? p < partitions : p != MetadataTableDescriptor.NO_PARTITION && -1L - p < broadcastPartitions)
            : p == MetadataTableDescriptor.NO_PARTITION;
        if (!inRange) {
            throw new IllegalArgumentException(KeyText.of(key) + ": partition " + p + " (a regular file needs one of "
                + partitions + " regular or " + broadcastPartitions + " broadcast partitions, anything else none)");
        }
        final boolean symlink = FileModes.isSymlink(e.mode());
        if (symlink != (e.linkTarget() != null)) {
            throw new IllegalArgumentException(KeyText.of(key) + ": a link target is required for, and only for, " +
                "a symlink (mode 0" + Integer.toOctalString(e.mode()) + ")");
        }
        if (symlink && indexOfNul(e.linkTarget()) >= 0) {
            throw new IllegalArgumentException(KeyText.of(key) + ": symlink target holds a NUL byte");
        }
        if (key.length == 0 && !FileModes.isDirectory(e.mode())) {
            throw new IllegalArgumentException("the root \"\" must be a directory");
        }
    }

    /** Keys are normalised paths below the mount point: no leading or trailing '/', no empty, "." or ".."
     * component, no NUL. "" (the root) is the one key with no component. */
    private static void checkKey(final byte[] key) {
        int start = 0;
        for (int i = 0; i <= key.length && key.length > 0; i++) {
            if (i < key.length && key[i] == 0) {
                throw new IllegalArgumentException("key holds a NUL byte: " + KeyText.of(key));
            }
            if (i == key.length || key[i] == '/') {
                final int length = i - start;
                final boolean dots = (length == 1 && key[start] == '.') ||
                    (length == 2 && key[start] == '.' && key[start + 1] == '.');
                if (length == 0 || dots) {
                    throw new IllegalArgumentException("key is not a normalised relative path: " + KeyText.of(key));
                }
                if (length > MetadataTableDescriptor.MAX_NAME_LENGTH) {
                    throw new IllegalArgumentException("name of " + length + " bytes (over "
                        + MetadataTableDescriptor.MAX_NAME_LENGTH + ") in " + KeyText.of(key));
                }
                start = i + 1;
            }
        }
    }

    private static int indexOfNul(final byte[] bytes) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                return i;
            }
        }
        return -1;
    }
}
