package org.fanstore.prep.format.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Random;

import org.junit.jupiter.api.Test;

/** The byte-level name rule prep applies to millions of keys decides exactly as Java's strict UTF-8 decoder. */
class LocalNamesTest {
    /** The rule the simple way: decode strictly, then look at the components. */
    private static boolean reference(final byte[] key) {
        if (key.length > 4000) {
            return false;
        }
        try {
            final String s = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(key)).toString();
            for (final String component : s.split("/")) {
                if (component.getBytes(StandardCharsets.UTF_8).length > 255 || component.startsWith(".fanstore-")) {
                    return false;
                }
            }
            return true;
        } catch (final CharacterCodingException e) {
            return false;
        }
    }

    @Test
    void randomBytesAreJudgedAsTheStrictDecoderJudgesThem() {
        final Random random = new Random(11);
        final int[] interesting = {0x2f, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0,
            0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff};
        int valid = 0;
        for (int n = 0; n < 200_000; n++) {
            final byte[] key = new byte[1 + random.nextInt(12)];
            for (int i = 0; i < key.length; i++) {
                key[i] = (byte)(random.nextInt(4) == 0 ? random.nextInt(256) : interesting[random.nextInt(
                    interesting.length)]);
            }
            final boolean want = reference(key);
            valid += want ? 1 : 0;
            assertEquals(want, LocalNames.unpackable(key), () -> java.util.HexFormat.of().formatHex(key));
        }
        assertTrue(valid > 1000 && valid < 199_000, valid + " valid of 200,000: both kinds must be tried");
    }

    @Test
    void longComponentsAndReservedNamesAreRefused() {
        assertTrue(LocalNames.unpackable(("ds/" + "a".repeat(255) + "/f").getBytes(StandardCharsets.UTF_8)));
        assertFalse(LocalNames.unpackable(("ds/" + "a".repeat(256) + "/f").getBytes(StandardCharsets.UTF_8)));
        assertFalse(LocalNames.unpackable("ds/.fanstore-tmp/f".getBytes(StandardCharsets.UTF_8)));
        assertFalse(LocalNames.unpackable(("ds/" + "d/".repeat(2000)).getBytes(StandardCharsets.UTF_8)));
        assertEquals("ds/caf\u00e9", LocalNames.localName("ds/caf\u00e9".getBytes(StandardCharsets.UTF_8)));
    }
}
