package org.fanstore.runtime.output;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.fanstore.runtime.fetch.FetchSource;

/**
 * What this rank serves to remote fetchers: committed outputs it holds (ids of {@link OutputObjects}) from their
 * files in the upper directory, everything else from the inputs' source. One fetch service per rank, so one
 * source routes.
 */
public final class OutputFetchSource implements FetchSource {
    private final HeldOutputs held;
    private final FetchSource inputs;

    public OutputFetchSource(HeldOutputs held, FetchSource inputs) {
        this.held = held;
        this.inputs = inputs;
    }

    @Override
    public long length(long id) throws IOException {
        if (!OutputObjects.isOutput(id)) {
            return inputs.length(id);
        }
        Path file = held.file(id);
        if (file == null) {
            return NOT_HELD;
        }
        try {
            return Files.size(file);
        } catch (NoSuchFileException unlinkedMeanwhile) {
            return NOT_HELD;
        }
    }

    @Override
    public boolean holds(long id, long position, long length, boolean reader) {
        return OutputObjects.isOutput(id) || inputs.holds(id, position, length, reader);
    }

    @Override
    public void read(long id, long position, ByteBuffer dst) throws IOException {
        if (!OutputObjects.isOutput(id)) {
            inputs.read(id, position, dst);
            return;
        }
        Path file = held.file(id);
        if (file == null) {
            throw new NoSuchFileException("output object " + id);
        }
        // Opened per chunk: a committed output is read by few remote readers, and a held channel would keep an
        // unlinked file's space in use until the job ends.
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long at = position;
            while (dst.hasRemaining()) {
                int n = ch.read(dst, at);
                if (n < 0) {
                    throw new EOFException(file + " ends at " + at + " inside output object " + id);
                }
                at += n;
            }
        }
    }
}
