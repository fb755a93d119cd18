package org.fanstore.prep;

import java.io.IOException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * A run of consecutive table slots whose small files one worker reads (and encodes) in one task. Handing files
 * to the workers one per task cost a queue hand-off and a thread wake-up (futex calls, about 1.5 per file) each,
 * as much CPU as reading a 5 KiB file; one task per batch pays that once for many files.
 * <p>
 * Slots in the range that are not read here (directories, symlinks, files the writer streams) stay null. The
 * first read failure ends the batch and is reported for its own slot, when the writer gets there: the files
 * before it are still written in order, as they would be without batching.
 */
final class ReadBatch {
    private final BodyEncoder encoder;
    private final int firstSlot;
    private final SourceEntry[] files;
    private final BodyEncoder.EncodedBody[] bodies;
    private IOException failure;
    private int failedSlot = -1;
    private Future<?> done;

    /** Covers slots {@code [firstSlot, firstSlot + files.length)}; {@code files[i]} null where nothing is read. */
    ReadBatch(final BodyEncoder encoder, final int firstSlot, final SourceEntry[] files) {
        this.encoder = encoder;
        this.firstSlot = firstSlot;
        this.files = files;
        this.bodies = new BodyEncoder.EncodedBody[files.length];
    }

    /** Starts reading on one of {@code pool}'s threads. */
    void submitTo(final ExecutorService pool) {
        done = pool.submit(this::readAll);
    }

    private void readAll() {
        for (int i = 0; i < files.length; i++) {
            final SourceEntry e = files[i];
            if (e == null) {
                continue;
            }
            try {
                bodies[i] = encoder.encode(e, e.size());
            } catch (final IOException io) {
                failure = io;
                failedSlot = firstSlot + i;
                return;
            }
        }
    }

    /**
     * Waits for the batch, then hands over the body read for {@code slot} (once: the batch forgets it, so its
     * array can be recycled). Waiting on the Future also orders these reads after the worker's writes.
     */
    BodyEncoder.EncodedBody take(final int slot) throws IOException, InterruptedException, ExecutionException {
        done.get();
        if (slot == failedSlot) {
            throw failure;
        }
        final BodyEncoder.EncodedBody body = bodies[slot - firstSlot];
        bodies[slot - firstSlot] = null;
        if (body == null) {
            throw new IllegalStateException("slot " + slot + " was not read by its batch");
        }
        return body;
    }
}
