package org.fanstore.prep.format;

import java.util.Locale;

/** The {@code --compress} choice recorded in the manifest; lz4 and lz4hc both write codec 1 bodies. */
public enum Compression {
    NONE, LZ4, LZ4HC;

    /** The word used in manifest.txt and on the command line. */
    public String manifestWord() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses a manifest word; null when unknown. */
    public static Compression fromManifestWord(final String word) {
        for (final Compression c : values()) {
            if (c.manifestWord().equals(word)) {
                return c;
            }
        }
        return null;
    }
}
