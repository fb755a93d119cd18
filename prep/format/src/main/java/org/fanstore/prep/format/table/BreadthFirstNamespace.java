package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.FileModes.isDirectory;
import static org.fanstore.prep.format.FileModes.isSymlink;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.*;

import java.util.HashMap;
import java.util.Map;

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
        final int n = ns.entries.length;
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
            final int count = isDirectory(ns.entries[s].mode()) ? ns.childCount[s] : 0;
            if (count > 0) {
                firstChild[k] = next;
                System.arraycopy(ns.children, ns.firstChild[s], order, next, count);
                next += count;
            }
        }
        ns.releaseChildren();
        attribute = new char[n];
        final Map<Attr, Integer> seen = new HashMap<>();
        final int[] triples = new int[3 * Math.min(n, MAX_ATTRIBUTES)];
        Attr last = null;
        int lastIndex = 0;
        for (int k = 0; k < n; k++) {
            final NamespaceEntry e = ns.entries[order[k]];
            final Attr a = new Attr(e.mode(), e.uid(), e.gid());
            if (!a.equals(last)) {
                final Integer known = seen.get(a);
                if (known == null) {
                    if (seen.size() == MAX_ATTRIBUTES) {
                        throw new IllegalArgumentException(KeyText.of(e.key()) + ": more than " + MAX_ATTRIBUTES
                            + " distinct (mode, uid, gid) in the namespace, the most one table holds");
                    }
                    lastIndex = seen.size();
                    seen.put(a, lastIndex);
                    triples[3 * lastIndex] = a.mode;
                    triples[3 * lastIndex + 1] = a.uid;
                    triples[3 * lastIndex + 2] = a.gid;
                } else {
                    lastIndex = known;
                }
                last = a;
            }
            attribute[k] = (char)lastIndex;
        }
        attributeCount = seen.size();
        attributes = triples;
        storedFrom = new int[n];
        extendsParent = new boolean[n];
        names();
        namesBase = new long[n];
        nameOffset = new int[n];
        namesLength = layOutNames();
    }

    private record Attr(int mode, int uid, int gid) {
    }

    NamespaceEntry entry(final int k) {
        return ns.entries[order[k]];
    }

    long hash(final int k) {
        return ns.hashes[order[k]];
    }

    /** Stored name length of entry k (0 for the root). */
    int storedLength(final int k) {
        return k == 0 ? 0 : entry(k).key().length - storedFrom[k];
    }

    /** Where each name starts in its key, and which names extend their parent's. */
    private void names() {
        for (int k = 1; k < order.length; k++) {
            final byte[] key = entry(k).key();
            final int p = parent[k];
            final int nameFrom = p == 0 ? 0 : SortedNamespace.parentLength(key) + 1;
            storedFrom[k] = nameFrom;
            if (p == 0 || extendsParent[p]) {
                continue;
            }
            final byte[] parentKey = entry(p).key();
            final int parentFrom = storedFrom[p];
            if (TableSink.extendsName(parentKey, parentFrom, key, nameFrom)) {
                extendsParent[k] = true;
                storedFrom[k] = nameFrom + parentKey.length - parentFrom;
            }
        }
    }

    /** Directories in entry order, each one's children's stored names (and symlink targets) in child order. */
    private long layOutNames() {
        long at = 0;
        for (int k = 0; k < order.length; k++) {
            final NamespaceEntry d = entry(k);
            final int count = isDirectory(d.mode()) ? ns.childCount[order[k]] : 0;
            if (count == 0) {
                continue;
            }
            namesBase[k] = at;
            final long base = at;
            for (int c = firstChild[k]; c < firstChild[k] + count; c++) {
                final long offset = at - base;
                if (offset > 0xffffffffL) {
                    throw new IllegalArgumentException(KeyText.of(d.key()) + ": its names exceed the 4 GiB one "
                        + "directory's names may take in a table");
                }
                nameOffset[c] = (int)offset;
                at += storedLength(c);
                if (isSymlink(entry(c).mode())) {
                    at += entry(c).linkTarget().length;
                }
            }
        }
        return at;
    }
}
