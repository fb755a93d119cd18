package org.fanstore.prep.format;

import java.io.IOException;
import java.nio.file.Path;

/** manifest.txt is missing a record or has one that does not parse; the message names the file and line. */
public final class BadManifestException extends IOException {
    private static final long serialVersionUID = 1L;

    public BadManifestException(final Path file, final int line, final String problem) {
        super(file + (line > 0 ? ":" + line : "") + ": " + problem +
            " (manifest.txt is written by fanstore prep; re-run it rather than editing the file)");
    }
}
