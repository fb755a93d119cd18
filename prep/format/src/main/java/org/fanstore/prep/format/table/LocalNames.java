package org.fanstore.prep.format.table;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
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
    private static final String RESERVED_PREFIX = ".fanstore-";

    private LocalNames() {
    }

    /** The relative local path of {@code key}, or null when it cannot be unpacked byte-exact. */
    public static String localName(final byte[] key) {
        if (key.length > MAX_LOCAL_PATH) {
            return null;
        }
        try {
            final String s = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(key)).toString();
            for (final String component : s.split("/")) {
                if (component.getBytes(StandardCharsets.UTF_8).length > NAME_MAX ||
                    component.startsWith(RESERVED_PREFIX)) {
                    return null;
                }
            }
            return s;
        } catch (final CharacterCodingException e) {
            return null;
        }
    }

    public static boolean unpackable(final byte[] key) {
        return localName(key) != null;
    }
}
