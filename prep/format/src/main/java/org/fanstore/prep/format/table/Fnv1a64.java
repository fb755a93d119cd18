package org.fanstore.prep.format.table;

/** 64-bit FNV-1a, the key hash of the metadata table (same function as {@code fs_fnv1a64} in the shim). */
public final class Fnv1a64 {
    public static final long OFFSET_BASIS = 0xcbf29ce484222325L;
    public static final long PRIME = 0x100000001b3L;

    private Fnv1a64() {
    }

    public static long hash(final byte[] bytes) {
        return hash(bytes, 0, bytes.length);
    }

    /** Hash of {@code bytes[from .. from+length)}: lets a caller hash a key's parent prefix without copying. */
    public static long hash(final byte[] bytes, final int from, final int length) {
        long h = OFFSET_BASIS;
        for (int i = from, end = from + length; i < end; i++) {
            h ^= bytes[i] & 0xff;
            h *= PRIME;
        }
        return h;
    }
}
