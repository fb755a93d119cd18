package org.fanstore.prep.format;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Dataset paths are raw bytes ('/'-separated, relative to the root, any byte but NUL). This class turns them
 * into text for people ({@link #display}) and for the manifest ({@link #escape}/{@link #unescape}), and answers
 * the tree questions (parent, name) without ever going through a lossy charset.
 */
public final class PathBytes {
    private static final byte[] HEX = "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);
    private static final Charset FILE_NAME_CHARSET = lookUpFileNameCharset();

    private PathBytes() {
    }

    /** UTF-8 text when the bytes are valid UTF-8, otherwise the invalid bytes as {@code \xNN}; root is ".". */
    public static String display(final byte[] path) {
        if (path.length == 0) {
            return ".";
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(path)).toString();
        } catch (final CharacterCodingException e) {
            final StringBuilder sb = new StringBuilder();
            for (final byte b : path) {
                final int c = b & 0xFF;
                if (c >= 0x20 && c < 0x7F && c != '\\') {
                    sb.append((char)c);
                } else {
                    sb.append(String.format("\\x%02X", c));
                }
            }
            return sb.toString();
        }
    }

    /** Percent-escapes every byte outside {@code [A-Za-z0-9._-]} as {@code %XX} (the manifest's encoding). */
    public static String escape(final byte[] bytes) {
        final StringBuilder sb = new StringBuilder(bytes.length);
        for (final byte b : bytes) {
            final int c = b & 0xFF;
            if (isUnreserved(c)) {
                sb.append((char)c);
            } else {
                sb.append('%').append((char)HEX[c >>> 4]).append((char)HEX[c & 0xF]);
            }
        }
        return sb.toString();
    }

    /** Inverse of {@link #escape}; also accepts lower-case hex. Throws IllegalArgumentException on bad input. */
    public static byte[] unescape(final String text) {
        return percentDecode(text, true);
    }

    /**
     * Lenient %XX decoding, for text that is not the manifest's: a {@code file:} URI's raw path, or a path a
     * person typed. Each valid %XX becomes its byte; everything else, a stray '%' included, is kept as its
     * UTF-8 bytes.
     */
    public static byte[] percentDecode(final String text) {
        return percentDecode(text, false);
    }

    /**
     * The charset the JVM decodes file names with ({@code sun.jnu.encoding}, set from the locale at start-up),
     * or the default charset when that is absent or unknown.
     */
    public static Charset fileNameCharset() {
        return FILE_NAME_CHARSET;
    }

    /** The one %XX decoder; strict: only unreserved characters and well-formed escapes (the manifest's form). */
    private static byte[] percentDecode(final String text, final boolean strict) {
        final byte[] in = text.getBytes(StandardCharsets.UTF_8);
        final ByteArrayOutputStream out = new ByteArrayOutputStream(in.length);
        for (int i = 0; i < in.length; i++) {
            final int c = in[i] & 0xFF;
            if (c == '%') {
                final boolean complete = i + 2 < in.length;
                final int hi = complete ? Character.digit(in[i + 1] & 0xFF, 16) : -1;
                final int lo = complete ? Character.digit(in[i + 2] & 0xFF, 16) : -1;
                if (hi >= 0 && lo >= 0) {
                    out.write(hi << 4 | lo);
                    i += 2;
                    continue;
                }
                if (strict) {
                    // In strict mode every byte before this one was ASCII, so i is also the character index.
                    throw new IllegalArgumentException(
                        (complete ? "bad" : "truncated") + " %XX escape at character " + i);
                }
            } else if (strict && !isUnreserved(c)) {
                throw new IllegalArgumentException("character '" + text.charAt(i) + "' must be %-escaped");
            }
            out.write(c);
        }
        return out.toByteArray();
    }

    /** The parent directory's path (the root's children have the empty path as parent). */
    public static byte[] parent(final byte[] path) {
        final int slash = lastSlash(path);
        return slash < 0 ? new byte[0] : Arrays.copyOf(path, slash);
    }

    /** The last path segment. */
    public static byte[] name(final byte[] path) {
        final int slash = lastSlash(path);
        return Arrays.copyOfRange(path, slash + 1, path.length);
    }

    /** {@code dir + "/" + name}, or {@code name} when {@code dir} is the root. */
    public static byte[] child(final byte[] dir, final byte[] name) {
        if (dir.length == 0) {
            return name.clone();
        }
        final byte[] out = Arrays.copyOf(dir, dir.length + 1 + name.length);
        out[dir.length] = '/';
        System.arraycopy(name, 0, out, dir.length + 1, name.length);
        return out;
    }

    /** True when {@code path} equals {@code dir} or lies below it. */
    public static boolean isWithin(final byte[] path, final byte[] dir) {
        if (dir.length == 0) {
            return true;
        }
        if (path.length < dir.length || Arrays.compare(path, 0, dir.length, dir, 0, dir.length) != 0) {
            return false;
        }
        return path.length == dir.length || path[dir.length] == '/';
    }

    private static int lastSlash(final byte[] path) {
        for (int i = path.length - 1; i >= 0; i--) {
            if (path[i] == '/') {
                return i;
            }
        }
        return -1;
    }

    private static Charset lookUpFileNameCharset() {
        final String name = System.getProperty("sun.jnu.encoding");
        try {
            return name == null ? Charset.defaultCharset() : Charset.forName(name);
        } catch (final IllegalArgumentException e) {
            return Charset.defaultCharset();
        }
    }

    private static boolean isUnreserved(final int c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '.' || c == '_' || c == '-';
    }
}
