package org.fanstore.prep.format.table;

import java.nio.charset.StandardCharsets;

/**
 * Which keys a node can unpack byte-exact as {@code <local root>/<key>}: valid UTF-8 (Java names files by
 * String), every component within NAME_MAX, the whole within PATH_MAX with room for the local root, and no
 * component the runtime uses for its own files. Prep marks such files {@link MetadataTableDescriptor#FLAG_UNPACKABLE};
 * the runtime's unpacker places them with the same rule.
 */
public final class LocalNames {
    private static final int MAX_LOCAL_PATH = 4000;
    private static final int NAME_MAX = 255;
    /** Names the runtime keeps for its own files beside unpacked ones. */
    private static final byte[] RESERVED = ".fanstore-".getBytes(StandardCharsets.US_ASCII);

    private LocalNames() {
    }

    /** The relative local path of {@code key}, or null when it cannot be unpacked byte-exact. */
    public static String localName(final byte[] key) {
        return unpackable(key) ? new String(key, StandardCharsets.UTF_8) : null;
    }

    /** Whether {@code key} can be unpacked byte-exact (prep asks for each of millions of keys: no allocation). */
    public static boolean unpackable(final byte[] key) {
        if (key.length > MAX_LOCAL_PATH || !wellFormedUtf8(key)) {
            return false;
        }
        for (int start = 0; start <= key.length; ) {
            int end = start;
            while (end < key.length && key[end] != '/') {
                end++;
            }
            if (end - start > NAME_MAX || startsWith(key, start, end, RESERVED)) {
                return false;
            }
            start = end + 1;
        }
        return true;
    }

    private static boolean startsWith(final byte[] key, final int start, final int end, final byte[] prefix) {
        if (end - start < prefix.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (key[start + i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Well-formed UTF-8 as Unicode defines it (Table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF),
     * which is exactly what Java's UTF-8 decoder accepts when it reports malformed input: such names survive the
     * round trip through a Java String that unpacking makes.
     */
    static boolean wellFormedUtf8(final byte[] b) {
        for (int i = 0; i < b.length; ) {
            final int c = b[i] & 0xff;
            if (c < 0x80) {
                i++;
                continue;
            }
            final int n;
            int lo = 0x80;
            int hi = 0xbf;
            if (c >= 0xc2 && c <= 0xdf) {
                n = 1;
            } else if (c >= 0xe0 && c <= 0xef) {
                n = 2;
                lo = c == 0xe0 ? 0xa0 : 0x80;
                hi = c == 0xed ? 0x9f : 0xbf;
            } else if (c >= 0xf0 && c <= 0xf4) {
                n = 3;
                lo = c == 0xf0 ? 0x90 : 0x80;
                hi = c == 0xf4 ? 0x8f : 0xbf;
            } else {
                return false;
            }
            if (i + n >= b.length) {
                return false;
            }
            final int second = b[i + 1] & 0xff;
            if (second < lo || second > hi) {
                return false;
            }
            for (int k = 2; k <= n; k++) {
                final int next = b[i + k] & 0xff;
                if (next < 0x80 || next > 0xbf) {
                    return false;
                }
            }
            i += n + 1;
        }
        return true;
    }
}
