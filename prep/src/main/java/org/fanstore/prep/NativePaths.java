package org.fanstore.prep;

import java.net.URI;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import org.fanstore.prep.format.PathBytes;

/**
 * Exact file-name bytes for {@link Path}s. On Linux a Path keeps the bytes the kernel returned, but
 * {@code toString()} decodes them with {@code sun.jnu.encoding}, and bytes that are not valid in that charset
 * come out as U+FFFD (UTF-8) or '?' (ASCII locales): converting back would name a different file. The path's
 * {@code file:} URI is built from its native bytes, percent-encoded, so it is the lossless way out (and
 * {@code Path.of(URI)} the lossless way back in). The URI costs a stat, so it is used only when the text form
 * might be lossy.
 */
public final class NativePaths {
    private static final Charset JNU = PathBytes.fileNameCharset();
    private static final Path ROOT = Path.of("/");
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private NativePaths() {
    }

    /** The native bytes of {@code path} (relative stays relative). */
    public static byte[] bytesOf(final Path path) {
        final String text = path.toString();
        if (isExact(text)) {
            return text.getBytes(JNU);
        }
        final Path absolute = path.isAbsolute() ? path : ROOT.resolve(path);
        final byte[] bytes = PathBytes.percentDecode(absolute.toUri().getRawPath());
        final int start = path.isAbsolute() ? 0 : 1;
        int end = bytes.length;
        // toUri() appends '/' to directories.
        if (end - start > 1 && bytes[end - 1] == '/') {
            end--;
        }
        final byte[] out = new byte[end - start];
        System.arraycopy(bytes, start, out, 0, out.length);
        return out;
    }

    /** A Path naming exactly the absolute native path {@code absolute}. */
    public static Path pathOf(final byte[] absolute) {
        if (absolute.length == 0 || absolute[0] != '/') {
            throw new IllegalArgumentException("not an absolute path: " + new String(absolute, JNU));
        }
        final StringBuilder sb = new StringBuilder("file://");
        for (final byte b : absolute) {
            final int c = b & 0xFF;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
                c == '.' || c == '-' || c == '_') {
                sb.append((char)c);
            } else {
                sb.append('%').append(HEX[c >>> 4]).append(HEX[c & 0xF]);
            }
        }
        return Path.of(URI.create(sb.toString()));
    }

    private static boolean isExact(final String text) {
        if (JNU.equals(StandardCharsets.ISO_8859_1)) {
            return true;
        }
        if (JNU.equals(StandardCharsets.UTF_8)) {
            return text.indexOf('\uFFFD') < 0;
        }
        for (int i = 0; i < text.length(); i++) {
            final char c = text.charAt(i);
            if (c >= 0x80 || c == '?') {
                return false;
            }
        }
        return true;
    }
}
