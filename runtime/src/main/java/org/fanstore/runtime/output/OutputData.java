package org.fanstore.runtime.output;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Where this rank's readers open a committed output file: its file in the upper directory when this rank holds
 * it, otherwise a read-only copy fetched from the holder. Implementations may block (call off the dispatcher).
 */
public interface OutputData {
    Path readable(OutputRecord file, Duration timeout) throws IOException;
}
