package org.fanstore.runtime.output;

import java.nio.file.NoSuchFileException;

/**
 * A committed output that this rank can no longer read after a node was lost (FetchedOutputData): its holder was
 * lost before draining it, or is out of reach and it is not in --output-dir. Readers get ENOENT at once, no retry.
 */
public final class LostOutputException extends NoSuchFileException {
    private static final long serialVersionUID = 1L;

    public LostOutputException(String key, String why) {
        super(key, null, why);
    }
}
