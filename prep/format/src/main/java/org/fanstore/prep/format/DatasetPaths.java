package org.fanstore.prep.format;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Lexical path arithmetic on raw path bytes, shared by prep (is a symlink's target inside the dataset?) and
 * readers (follow a stored symlink): no file system is consulted, so nothing can resolve outside the dataset.
 */
public final class DatasetPaths {
    private DatasetPaths() {
    }

    /**
     * Where a relative symlink in directory {@code linkDir} pointing at {@code target} leads, as a dataset path;
     * null when the target is absolute or climbs above the dataset root.
     */
    public static byte[] resolveLink(final byte[] linkDir, final byte[] target) {
        if (target.length == 0 || target[0] == '/') {
            return null;
        }
        final List<byte[]> segments = new ArrayList<>(split(linkDir));
        for (final byte[] segment : split(target)) {
            if (segment.length == 1 && segment[0] == '.') {
                continue;
            }
            if (segment.length == 2 && segment[0] == '.' && segment[1] == '.') {
                if (segments.isEmpty()) {
                    return null;
                }
                segments.remove(segments.size() - 1);
                continue;
            }
            segments.add(segment);
        }
        return join(segments);
    }

    /**
     * Normalises a user-supplied relative path: drops empty and "." segments and a trailing '/'; null when it is
     * absolute or contains "..".
     */
    public static byte[] normalizeRelative(final byte[] path) {
        if (path.length > 0 && path[0] == '/') {
            return null;
        }
        final List<byte[]> segments = new ArrayList<>();
        for (final byte[] segment : split(path)) {
            if (segment.length == 2 && segment[0] == '.' && segment[1] == '.') {
                return null;
            }
            if (!(segment.length == 1 && segment[0] == '.')) {
                segments.add(segment);
            }
        }
        return join(segments);
    }

    private static List<byte[]> split(final byte[] path) {
        final List<byte[]> out = new ArrayList<>();
        int start = 0;
        for (int i = 0; i <= path.length; i++) {
            if (i == path.length || path[i] == '/') {
                if (i > start) {
                    final byte[] s = new byte[i - start];
                    System.arraycopy(path, start, s, 0, s.length);
                    out.add(s);
                }
                start = i + 1;
            }
        }
        return out;
    }

    private static byte[] join(final List<byte[]> segments) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < segments.size(); i++) {
            if (i > 0) {
                out.write('/');
            }
            out.writeBytes(segments.get(i));
        }
        return out.toByteArray();
    }
}
