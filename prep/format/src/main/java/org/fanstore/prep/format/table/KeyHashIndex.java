package org.fanstore.prep.format.table;

import java.util.Arrays;

/**
 * The keys of a {@link NamespaceColumns} by hash, to resolve parent keys while the writer builds: open addressing
 * with linear probing from {@code hash & (B - 1)}, each bucket holding entry index + 1 (0 = empty). Keys must be
 * distinct; primitive arrays only, so a million-entry index costs a few tens of MB.
 */
final class KeyHashIndex {
    private final NamespaceColumns keys;
    private final long[] hashes;
    private final int[] buckets;
    private final int mask;

    private KeyHashIndex(final NamespaceColumns keys, final long[] hashes, final int[] buckets) {
        this.keys = keys;
        this.hashes = hashes;
        this.buckets = buckets;
        this.mask = buckets.length - 1;
    }

    /** Bucket count for {@code entries} keys: the next power of two at or above twice the count. */
    static int bucketCountFor(final int entries) {
        if (entries > (1 << 29)) {
            throw new IllegalArgumentException("namespace of " + entries + " entries is too large for one table");
        }
        final int wanted = Math.max(2, 2 * entries);
        return Integer.highestOneBit(wanted - 1) << 1;
    }

    static KeyHashIndex build(final NamespaceColumns keys) {
        final int n = keys.count;
        final long[] hashes = new long[n];
        final int[] buckets = new int[bucketCountFor(n)];
        final int mask = buckets.length - 1;
        for (int i = 0; i < n; i++) {
            final long h = Fnv1a64.hash(keys.chunk(i), keys.from(i), keys.keyLength[i]);
            hashes[i] = h;
            int slot = (int)h & mask;
            while (buckets[slot] != 0) {
                slot = (slot + 1) & mask;
            }
            buckets[slot] = i + 1;
        }
        return new KeyHashIndex(keys, hashes, buckets);
    }

    /** Index of the key equal to {@code key[from .. from + length)}, or -1. */
    int find(final byte[] key, final int from, final int length) {
        final long h = Fnv1a64.hash(key, from, length);
        for (int slot = (int)h & mask; ; slot = (slot + 1) & mask) {
            final int b = buckets[slot];
            if (b == 0) {
                return -1;
            }
            final int i = b - 1;
            final int at = keys.from(i);
            if (hashes[i] == h && Arrays.equals(keys.chunk(i), at, at + keys.keyLength[i], key, from, from + length)) {
                return i;
            }
        }
    }

    /** Every key's hash by index (not a copy): what a caller keeps once it no longer looks keys up. */
    long[] hashes() {
        return hashes;
    }
}
