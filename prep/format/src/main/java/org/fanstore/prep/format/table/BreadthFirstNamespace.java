package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.FileModes.isDirectory;
import static org.fanstore.prep.format.FileModes.isSymlink;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.*;

import java.util.Arrays;

/**
 * A {@link SortedNamespace} put in format 3's order (README.md "Order"): breadth first over directories, each
 * directory's children contiguous and in name order; plus what the writer derives from that order: the attribute
 * table (distinct mode, uid, gid in order of first use), suffix-compressed names (NAME_EXTENDS_PARENT), each
 * directory's names base and each entry's name offset ({@link TableSink} places the buckets). Arrays are indexed
 * by final entry index unless named "sorted".
 */
final class BreadthFirstNamespace {
    final SortedNamespace ns;
    /** Final entry index to the SortedNamespace's (key order) index. */
    final int[] order;
    /** Per final index: the first child's final index (directories with children; else 0). */
    final int[] firstChild;
    final int[] parent;
    /** Per final index: index into {@link #attributes}. */
    final char[] attribute;
    /** (mode, uid, gid) triples, three ints each, in order of first use. */
    final int[] attributes;
    final int attributeCount;
    /** Per final index: bytes of the key skipped before the stored name (ROOT: 0). */
    final int[] storedFrom;
    final boolean[] extendsParent;
    /** Per final index: a directory's names base (0 without children). */
    final long[] namesBase;
    /** Per final index: the stored name's offset relative to the parent's names base. */
    final int[] nameOffset;
    final long namesLength;

    BreadthFirstNamespace(final SortedNamespace ns) {
        this.ns = ns;
        final NamespaceColumns c = ns.entries;
        final int n = c.count;
        order = new int[n];
        firstChild = new int[n];
        parent = new int[n];
        final int[] finalIndex = new int[n];
        int next = 1;
        for (int k = 0; k < n; k++) {
            final int s = order[k];
            finalIndex[s] = k;
            if (k > 0) {
                parent[k] = finalIndex[ns.parent[s]];
            }
            final int count = isDirectory(c.mode(s)) ? ns.childCount[s] : 0;
            if (count > 0) {
                firstChild[k] = next;
                System.arraycopy(ns.children, ns.firstChild[s], order, next, count);
                next += count;
            }
        }
        ns.releaseChildren();
        attribute = new char[n];
        // The columns number (mode, uid, gid) in order of addition; the table numbers them in order of first use.
        final int[] given = c.triples();
        final int[] renumber = new int[c.attributeCount()];
        Arrays.fill(renumber, -1);
        final int[] triples = new int[3 * c.attributeCount()];
        int used = 0;
        for (int k = 0; k < n; k++) {
            final int a = c.attribute[order[k]];
            if (renumber[a] < 0) {
                renumber[a] = used;
                System.arraycopy(given, 3 * a, triples, 3 * used, 3);
                used++;
            }
            attribute[k] = (char)renumber[a];
        }
        attributeCount = used;
        attributes = triples;
        storedFrom = new int[n];
        extendsParent = new boolean[n];
        names();
        namesBase = new long[n];
        nameOffset = new int[n];
        namesLength = layOutNames();
    }

    /** Key-order index of entry k. */
    int sorted(final int k) {
        return order[k];
    }

    long hash(final int k) {
        return ns.hashes[order[k]];
    }

    /** Key length of entry k. */
    int keyLength(final int k) {
        return ns.entries.keyLength[order[k]];
    }

    /** Stored name length of entry k (0 for the root). */
    int storedLength(final int k) {
        return k == 0 ? 0 : keyLength(k) - storedFrom[k];
    }

    /** Where each name starts in its key, and which names extend their parent's. */
    private void names() {
        final NamespaceColumns c = ns.entries;
        for (int k = 1; k < order.length; k++) {
            final int s = order[k];
            final byte[] key = c.chunk(s);
            final int from = c.from(s);
            final int length = c.keyLength[s];
            final int p = parent[k];
            final int nameFrom = p == 0 ? 0 : SortedNamespace.parentLength(key, from, length) + 1;
            storedFrom[k] = nameFrom;
            if (p == 0 || extendsParent[p]) {
                continue;
            }
            final int ps = order[p];
            final int parentFrom = storedFrom[p];
            final int parentName = c.keyLength[ps] - parentFrom;
            final int parentAt = c.from(ps) + parentFrom;
            if (parentName < length - nameFrom && Arrays.equals(c.chunk(ps), parentAt, parentAt + parentName,
                key, from + nameFrom, from + nameFrom + parentName)) {
                extendsParent[k] = true;
                storedFrom[k] = nameFrom + parentName;
            }
        }
    }

    /** Directories in entry order, each one's children's stored names (and symlink targets) in child order. */
    private long layOutNames() {
        long at = 0;
        for (int k = 0; k < order.length; k++) {
            final int count = isDirectory(ns.entries.mode(order[k])) ? ns.childCount[order[k]] : 0;
            if (count == 0) {
                continue;
            }
            namesBase[k] = at;
            final long base = at;
            for (int c = firstChild[k]; c < firstChild[k] + count; c++) {
                final long offset = at - base;
                if (offset > 0xffffffffL) {
                    throw new IllegalArgumentException(KeyText.of(ns.entries.keyOf(order[k]))
                        + ": its names exceed the 4 GiB one directory's names may take in a table");
                }
                nameOffset[c] = (int)offset;
                at += storedLength(c);
                if (isSymlink(ns.entries.mode(order[c]))) {
                    at += ns.entries.size[order[c]];
                }
            }
        }
        return at;
    }
}
