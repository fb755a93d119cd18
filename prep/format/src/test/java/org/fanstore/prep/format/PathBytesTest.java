package org.fanstore.prep.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PathBytesTest {
    @Test
    void everyByteSurvivesEscapeAndUnescape() {
        final byte[] all = new byte[256];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte)i;
        }
        final String escaped = PathBytes.escape(all);
        assertArrayEquals(all, PathBytes.unescape(escaped));
        assertArrayEquals(all, PathBytes.percentDecode(escaped));
        assertArrayEquals(new byte[] {(byte)0xAB, '/'}, PathBytes.unescape("%ab%2f"), "lower-case hex is accepted");
    }

    @Test
    void unescapeRefusesWhatTheManifestNeverHolds() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PathBytes.unescape("a%4"))
            .getMessage().contains("truncated"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PathBytes.unescape("a%zz"))
            .getMessage().contains("bad %XX escape at character 1"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PathBytes.unescape("a/b"))
            .getMessage().contains("'/' must be %-escaped"));
        assertThrows(IllegalArgumentException.class, () -> PathBytes.unescape("caf\u00e9"));
    }

    @Test
    void percentDecodeKeepsWhatIsNotAnEscape() {
        assertArrayEquals(bytes("100%/a%zz/%4"), PathBytes.percentDecode("100%/a%zz/%4"));
        assertArrayEquals(bytes("caf\u00e9/x y"), PathBytes.percentDecode("caf\u00e9/x%20y"));
        assertArrayEquals(new byte[] {'n', (byte)0xFF, '/'}, PathBytes.percentDecode("n%ff/"));
    }

    @Test
    void percentDecodeReadsTheExactBytesOfAFileUri(@TempDir final Path dir) throws Exception {
        final Path file = Files.createFile(dir.resolve("a b%c#d"));
        final byte[] dirBytes = PathBytes.percentDecode(dir.toUri().getRawPath());
        assertArrayEquals(PathBytes.child(Arrays.copyOf(dirBytes, dirBytes.length - 1), bytes("a b%c#d")),
            PathBytes.percentDecode(file.toUri().getRawPath()), "toUri() escapes ' ', '%' and '#'");
    }

    private static byte[] bytes(final String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
