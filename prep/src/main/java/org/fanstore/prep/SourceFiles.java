package org.fanstore.prep;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.file.StandardOpenOption;

/**
 * Where the packer reads a file's bytes from: the local tree ({@link #LOCAL}, the walk's path) or a bucket
 * ({@link BucketTree}, ranged GETs). One instance serves every reader thread.
 */
interface SourceFiles {
    /** A channel over the entry's bytes from the start; the caller reads at most the listed size. */
    ReadableByteChannel open(SourceEntry entry) throws IOException;

    /** How messages name the entry's source. */
    String describe(SourceEntry entry);

    /**
     * Whether reading waits on a network (every file is then read whole by the workers up to
     * {@link BodyEncoder#IN_MEMORY_LIMIT}, so GETs overlap instead of queueing on the writer).
     */
    boolean remote();

    /** The walked tree's files. */
    SourceFiles LOCAL = new SourceFiles() {
        @Override
        public ReadableByteChannel open(final SourceEntry entry) throws IOException {
            return FileChannel.open(entry.source(), StandardOpenOption.READ);
        }

        @Override
        public String describe(final SourceEntry entry) {
            return String.valueOf(entry.source());
        }

        @Override
        public boolean remote() {
            return false;
        }
    };
}
