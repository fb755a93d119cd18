package org.fanstore.runtime.cache;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;
import org.fanstore.runtime.layout.RankDirectory;

/**
 * The pins of {@link MaterializedCache}: each runtime answer names a second, private name of the cache file (a
 * hard link, {@link RankDirectory#CACHE_PIN}); the reader's shim opens that name and then unlinks it. Eviction
 * unlinks only the file's own name, so the inode lives until the reader holds a descriptor: the answer can never
 * turn into ENOENT, whatever the hand does meanwhile.
 *
 * <p>Why a link and not a pin count with a release message: the shim's unlink is the "open observed" signal, and
 * it costs the runtime nothing (no request, no reply); a timed pin alone would either evict under a reader the
 * scheduler stalled (a busy node) or hold every answered file for the whole grace. The grace here only reclaims
 * the pins of readers that died (or stalled for {@code graceNanos}) between answer and open: such a pin is
 * unlinked and one line is logged; a stalled reader then finds its pin gone and asks again (wrap_open.c).
 *
 * <p>Not thread-safe: the cache calls it under its lock. Bookkeeping is a queue in answer order; a pin older
 * than {@code PIN_CHECK_AFTER_NANOS} (or the grace, if shorter) is looked at once (one stat): gone means released
 * and it is forgotten, so the queue holds about one second of answers plus the few pins still waiting.
 */
final class CachePins {
    /** A pin's name parts, its birth (the clock's) and directory (its file's: a link needs one file system). */
    record Pin(int id, long seq, long born, Path dir) { }

    private final long graceNanos;
    private final long checkAfterNanos;
    /** Nanoseconds, System::nanoTime but in tests (a grace passes without sleeping it out). */
    private final LongSupplier clock;
    private final IntFunction<String> nameOf;
    private final Consumer<String> warn;
    private final ArrayDeque<Pin> young = new ArrayDeque<>();
    /** Checked, still present, not yet past the grace: their readers are slow (or gone). Few. */
    private final List<Pin> waiting = new ArrayList<>();
    private long seq;
    private long waitingSwept;
    private long made;
    private long expired;

    CachePins(long graceNanos, LongSupplier clock, IntFunction<String> nameOf, Consumer<String> warn) {
        this.graceNanos = graceNanos;
        this.checkAfterNanos = Math.min(PIN_CHECK_AFTER_NANOS, graceNanos);
        this.clock = clock;
        this.waitingSwept = clock.getAsLong() - checkAfterNanos;   // nanoTime has no fixed origin
        this.nameOf = nameOf;
        this.warn = warn;
    }

    /** A new pin name for entry id, not yet on disk nor tracked. */
    Pin next(int id, Path in) {
        return new Pin(id, ++seq, clock.getAsLong(), in);
    }

    Path path(Pin pin) {
        return RankDirectory.CACHE_PIN.in(pin.dir(), pin.id(), pin.seq());
    }

    /** Links a new pin to {@code target} (which must exist: caller holds the cache lock) and tracks it. */
    Path link(int id, Path target) throws IOException {
        Pin pin = next(id, target.getParent());
        Path p = path(pin);
        Files.createLink(p, target);
        track(pin);
        return p;
    }

    /** Tracks a pin whose file the caller put in place itself. */
    void track(Pin pin) {
        young.addLast(pin);
        made++;
        sweep(pin.born());
    }

    /** Forgets released pins and unlinks those past the grace (one log line each). */
    void sweep(long now) {
        while (!young.isEmpty() && now - young.peekFirst().born() > checkAfterNanos) {
            Pin p = young.pollFirst();
            if (Files.exists(path(p))) {
                waiting.add(p);
            }
        }
        // at most every checkAfterNanos / 10: many stalled readers must not cost every answer a stat each
        if (!waiting.isEmpty() && now - waitingSwept >= checkAfterNanos / 10) {
            waitingSwept = now;
            waiting.removeIf(p -> !Files.exists(path(p)) || now - p.born() > graceNanos && expire(p));
        }
    }

    private boolean expire(Pin p) {
        try {
            if (Files.deleteIfExists(path(p))) {
                expired++;
                warn.accept("a reader did not open " + nameOf.apply(p.id()) + " within "
                        + graceNanos / 1_000_000L + " ms of the runtime's answer (it stalled or died);"
                        + " its copy is released, a reader that still wants it asks again");
            }
        } catch (IOException e) {
            warn.accept("cannot remove " + path(p) + ": " + e.getMessage());
        }
        return true;
    }

    /** Pins handed out so far. */
    long made() {
        return made;
    }

    /** Pins removed unopened after the grace. */
    long expired() {
        return expired;
    }
}
