package org.fanstore.prep;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.fanstore.prep.format.PathBytes;

/**
 * Where the packer reads a file's bytes from: the local tree ({@link #local}, the input root plus the entry's path)
 * or a bucket ({@link BucketTree}, ranged GETs). One instance serves every reader thread.
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

    /** The walked tree's files: {@code root} (absolute, normalised) plus each entry's path. */
    static SourceFiles local(final Path root) {
        final byte[] rootBytes = NativePaths.bytesOf(root);
        return new SourceFiles() {
            @Override
            public ReadableByteChannel open(final SourceEntry entry) throws IOException {
                return FileChannel.open(pathOf(entry), StandardOpenOption.READ);
            }

            @Override
            public String describe(final SourceEntry entry) {
                return String.valueOf(pathOf(entry));
            }

            @Override
            public boolean remote() {
                return false;
            }

            private Path pathOf(final SourceEntry entry) {
                return entry.path().length == 0 ? root :
                    NativePaths.pathOf(PathBytes.child(rootBytes, entry.path()));
            }
        };
    }
}
