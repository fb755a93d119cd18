package org.fanstore.runtime.output;

import org.fanstore.prep.format.table.Fnv1a64;

/** Which rank decides about a path: FNV-1a 64 of the key bytes, modulo the world size. */
public final class OutputOwner {
    private OutputOwner() {
    }

    public static int of(byte[] key, int worldSize) {
        return (int) Long.remainderUnsigned(Fnv1a64.hash(key, 0, key.length), worldSize);
    }
}
