package org.fanstore.runtime.placement;

import java.io.IOException;

/**
 * A body in a local partition copy whose CRC32C disagrees with its table entry. The whole-file CRC only proves
 * the copy equals what the manifest describes; a doctored manifest can describe doctored bytes, so each body is
 * checked again before this node serves it. The message names the file and the partition.
 */
public final class CorruptBodyException extends IOException {
    private static final long serialVersionUID = 1L;

    public CorruptBodyException(String message) {
        super(message);
    }
}
