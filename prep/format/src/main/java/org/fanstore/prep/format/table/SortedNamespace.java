package org.fanstore.prep.format.table;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.fanstore.prep.format.FileModes;

/**
 * A namespace in key order ({@link BreadthFirstNamespace} then puts it in the table's order): its columns sorted by
 * unsigned key bytes (an index sort, then each column reordered), duplicates refused, the root and every missing
 * ancestor directory added (with the mtime and owner of their newest child), and the parent/children links
 * resolved, in primitive arrays indexed by key order. Entries were checked one by one as they were added.
 */
final class SortedNamespace {
    private static final byte[] ROOT_KEY = new byte[0];

    final NamespaceColumns entries;
    /** Each key's FNV-1a 64 hash (the index's buckets are dropped once the parents are linked). */
    final long[] hashes;
    final int[] parent;
    /** Where each directory's run starts in {@link #children}; null with it after {@link #releaseChildren}. */
    int[] firstChild;
    final int[] childCount;
    /** Children of every directory, contiguous per directory, each run in name order. */
    int[] children;

    private SortedNamespace(final NamespaceColumns entries, final KeyHashIndex index) {
        this.entries = entries;
        this.hashes = index.hashes();
        final int n = entries.count;
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
        final NamespaceColumns c = entries;
        final int[] newest = new int[c.count];
        Arrays.fill(newest, -1);
        for (int i = c.count - 1; i > 0; i--) {
            if (c.synthesized(i)) {
                c.inherit(i, newest[i]);
            }
            final int p = parent[i];
            if (c.synthesized(p) && (newest[p] < 0 || c.mtime[i] > c.mtime[newest[p]])) {
                newest[p] = i;
            }
        }
        if (c.synthesized(0)) {
            c.inherit(0, newest[0]);
        }
    }

    /** Sorts, checks and completes {@code c} (reordering its columns) and links it. */
    static SortedNamespace of(final NamespaceColumns c) {
        sortByKey(c);
        for (int i = 1; i < c.count; i++) {
            if (c.compareKeys(i - 1, i) == 0) {
                throw new IllegalArgumentException("duplicate key in namespace: " + KeyText.of(c.keyOf(i)));
            }
        }
        if (c.count == 0 || c.keyLength[0] != 0) {
            // The root sorts first; a dataset's entries never name it (the mount holds the datasets), and adding it
            // here spares building the hash index twice when it is the only missing directory.
            c.addSynthesized(ROOT_KEY);
            final int[] rootFirst = new int[c.count];
            rootFirst[0] = c.count - 1;
            for (int k = 1; k < c.count; k++) {
                rootFirst[k] = k - 1;
            }
            c.permute(rootFirst);
        }
        KeyHashIndex index = KeyHashIndex.build(c);
        final List<byte[]> missing = missingDirectories(c, index);
        if (missing.isEmpty()) {
            return new SortedNamespace(c, index);
        }
        index = null;
        for (final byte[] key : missing) {
            c.addSynthesized(key);
        }
        sortByKey(c);
        return new SortedNamespace(c, KeyHashIndex.build(c));
    }

    private static void sortByKey(final NamespaceColumns c) {
        c.permute(IndexSort.sort(c.count, c::compareKeys));
    }

    /** Length of key's parent key: up to its last '/', or 0 (the root) for a top-level key. */
    static int parentLength(final byte[] key) {
        return parentLength(key, 0, key.length);
    }

    /** Parent length of the key {@code key[from .. from + length)}. */
    static int parentLength(final byte[] key, final int from, final int length) {
        for (int i = length - 1; i >= 0; i--) {
            if (key[from + i] == '/') {
                return i;
            }
        }
        return 0;
    }

    /**
     * Ancestors no entry names, each once. Their times and owners are placeholders: the writer gives each the
     * mtime, uid and gid of its newest child, so every rank derives the same values.
     */
    private static List<byte[]> missingDirectories(final NamespaceColumns c, final KeyHashIndex index) {
        final List<byte[]> missing = new ArrayList<>();
        final Set<ByteBuffer> added = new HashSet<>();
        if (index.find(ROOT_KEY, 0, 0) < 0) {
            missing.add(ROOT_KEY);
            added.add(ByteBuffer.wrap(ROOT_KEY));
        }
        final ParentCache parents = new ParentCache(index);
        for (int i = 0; i < c.count; i++) {
            final int keyLength = c.keyLength[i];
            if (keyLength == 0) {
                continue;
            }
            final byte[] chunk = c.chunk(i);
            final int from = c.from(i);
            for (int length = parentLength(chunk, from, keyLength); ; length = parentLength(chunk, from, length)) {
                final int found = parents.find(chunk, from, length);
                if (found >= 0) {
                    if (!FileModes.isDirectory(c.mode(found))) {
                        throw new IllegalArgumentException(KeyText.of(c.keyOf(found)) + " is not a directory but has "
                            + KeyText.of(c.keyOf(i)) + " below it");
                    }
                    break;
                }
                final byte[] ancestor = Arrays.copyOfRange(chunk, from, from + length);
                if (!added.add(ByteBuffer.wrap(ancestor))) {
                    break;
                }
                missing.add(ancestor);
                if (length == 0) {
                    break;
                }
            }
        }
        return missing;
    }

    private void link(final KeyHashIndex index) {
        final NamespaceColumns c = entries;
        final int n = c.count;
        final ParentCache parents = new ParentCache(index);
        for (int i = 1; i < n; i++) {
            final byte[] chunk = c.chunk(i);
            final int from = c.from(i);
            final int p = parents.find(chunk, from, parentLength(chunk, from, c.keyLength[i]));
            parent[i] = p;
            childCount[p]++;
        }
        int next = 0;
        for (int i = 0; i < n; i++) {
            if (FileModes.isDirectory(c.mode(i))) {
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
        private int lastFrom;
        private int lastLength = -1;
        private int lastFound;

        ParentCache(final KeyHashIndex index) {
            this.index = index;
        }

        int find(final byte[] key, final int from, final int length) {
            if (length == lastLength && Arrays.equals(key, from, from + length, lastKey, lastFrom, lastFrom + length)) {
                return lastFound;
            }
            final int found = index.find(key, from, length);
            lastKey = key;
            lastFrom = from;
            lastLength = length;
            lastFound = found;
            return found;
        }
    }
}
