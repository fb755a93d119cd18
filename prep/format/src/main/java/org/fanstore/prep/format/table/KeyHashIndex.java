package org.fanstore.prep.format.table;

import java.util.Arrays;

/**
 * The table's bucket index built in memory: open addressing with linear probing from {@code hash & (B - 1)},
 * each bucket holding entry index + 1 (0 = empty), exactly the on-disk bucket section. The writer uses it both
 * to resolve parent keys while building and as the bucket array it then writes out.
 * Keys must be distinct; primitive arrays only, so a million-entry index costs a few tens of MB.
 */
final class KeyHashIndex {
    private final byte[][] keys;
    private final long[] hashes;
    private final int[] buckets;
    private final int mask;

    private KeyHashIndex(final byte[][] keys, final long[] hashes, final int[] buckets) {
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

    static KeyHashIndex build(final byte[][] keys) {
        final long[] hashes = new long[keys.length];
        final int[] buckets = new int[bucketCountFor(keys.length)];
        final int mask = buckets.length - 1;
        for (int i = 0; i < keys.length; i++) {
            final long h = Fnv1a64.hash(keys[i]);
            hashes[i] = h;
            int slot = (int)h & mask;
            while (buckets[slot] != 0) {
                slot = (slot + 1) & mask;
            }
            buckets[slot] = i + 1;
        }
        return new KeyHashIndex(keys, hashes, buckets);
    }

    /** Index of the key equal to {@code key[0 .. length)}, or -1. */
    int find(final byte[] key, final int length) {
        final long h = Fnv1a64.hash(key, 0, length);
        for (int slot = (int)h & mask; ; slot = (slot + 1) & mask) {
            final int b = buckets[slot];
            if (b == 0) {
                return -1;
            }
            final int i = b - 1;
            final byte[] candidate = keys[i];
            if (hashes[i] == h && Arrays.equals(candidate, 0, candidate.length, key, 0, length)) {
                return i;
            }
        }
    }

    long hash(final int index) {
        return hashes[index];
    }

    /** Every key's hash by index (not a copy): what a caller keeps once it no longer looks keys up. */
    long[] hashes() {
        return hashes;
    }

    /** The bucket section as it goes on disk (not a copy: callers only read it). */
    int[] buckets() {
        return buckets;
    }
}
