package org.fanstore.launcher;

import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The bytes a command-line argument really had. The JVM decodes argv with the locale's charset before main sees
 * it, so a file name that is not valid in that charset (Linux names are bytes) arrives as replacement
 * characters and cannot be named; {@code /proc/self/cmdline} still holds the raw bytes. Without it (not Linux,
 * or called in-process by a test) the argument's UTF-8 encoding is used.
 */
final class RawArguments {
    private RawArguments() {
    }

    static byte[] bytesOf(final String argument) {
        final Charset jnu = charset();
        final List<byte[]> raw = cmdline();
        for (int i = raw.size() - 1; i >= 0; i--) {
            final byte[] candidate = raw.get(i);
            if (new String(candidate, jnu).equals(argument)) {
                return candidate;
            }
        }
        return argument.getBytes(StandardCharsets.UTF_8);
    }

    private static Charset charset() {
        try {
            return Charset.forName(System.getProperty("sun.jnu.encoding", "UTF-8"));
        } catch (final IllegalArgumentException e) {
            return StandardCharsets.UTF_8;
        }
    }

    private static List<byte[]> cmdline() {
        final List<byte[]> out = new ArrayList<>();
        final byte[] all;
        try {
            all = Files.readAllBytes(Path.of("/proc/self/cmdline"));
        } catch (final IOException | UnsupportedOperationException e) {
            return out;
        }
        int start = 0;
        for (int i = 0; i < all.length; i++) {
            if (all[i] == 0) {
                final byte[] arg = new byte[i - start];
                System.arraycopy(all, start, arg, 0, arg.length);
                out.add(arg);
                start = i + 1;
            }
        }
        return out;
    }
}
