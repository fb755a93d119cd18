package org.fanstore.prep.format.table;

/** Keys as readable text for messages and test vectors: printable ASCII kept, every other byte as \xHH. */
public final class KeyText {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private KeyText() {
    }

    /** The key quoted, e.g. {@code "train/a\xff.jpg"}. */
    public static String of(final byte[] key) {
        final StringBuilder sb = new StringBuilder(key.length + 2).append('"');
        for (final byte b : key) {
            final int c = b & 0xff;
            if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
                sb.append((char)c);
            } else {
                sb.append("\\x").append(HEX[c >> 4]).append(HEX[c & 0xf]);
            }
        }
        return sb.append('"').toString();
    }

    /** Lower-case hex of every byte; "" for no bytes. */
    public static String hex(final byte[] bytes) {
        final StringBuilder sb = new StringBuilder(bytes.length * 2);
        for (final byte b : bytes) {
            sb.append(HEX[(b >> 4) & 0xf]).append(HEX[b & 0xf]);
        }
        return sb.toString();
    }
}
