package org.fanstore.prep;

import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

/** Which of the walker threads' failures the walk reports: what the user must act on. */
class SourceTreeWalkerTest {
    @Test
    void theFirstFailureStandsUnlessALaterOneIsTheHeapRunningOut() {
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final IOException vanished = new IOException("a directory vanished");
        final OutOfMemoryError heap = new OutOfMemoryError("heap");
        SourceTreeWalker.fail(failure, vanished);
        SourceTreeWalker.fail(failure, new IllegalStateException("second"));
        assertSame(vanished, failure.get(), "the first failure stands");
        SourceTreeWalker.fail(failure, heap);
        assertSame(heap, failure.get(), "the heap running out is what to act on");
        SourceTreeWalker.fail(failure, new IllegalMonitorStateException());
        SourceTreeWalker.fail(failure, new OutOfMemoryError("again"));
        assertSame(heap, failure.get(), "and it stays");
    }
}
