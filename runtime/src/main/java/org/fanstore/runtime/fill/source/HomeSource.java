package org.fanstore.runtime.fill.source;

import java.io.IOException;

/**
 * The dataset's home as a range source (runtime/home/README.md): the partition files on a shared FS
 * ({@link SharedFsSource}) or the partition objects in a bucket ({@link ObjectStoreSource}). It holds every byte
 * for the whole job, so the fill never marks it down.
 */
public interface HomeSource extends RangeSource, AutoCloseable {
    /**
     * Checks partition p (id: regular p, or -1-i for broadcast i) against the manifest now (size and fixed header):
     * a missing, foreign or damaged partition is refused before the command starts.
     */
    void check(int p) throws IOException;

    @Override
    void close();
}
