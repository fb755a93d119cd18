package org.fanstore.runtime.fill;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntFunction;

/**
 * Decides which ranges of the partitions a node keeps move next, and from which source (README.md, "The
 * scheduler"). Pure: state, events and the time passed in give the transfers to start; no thread, no I/O, no clock
 * of its own, so every decision is reproducible in a table-driven test. Not thread-safe: {@link Fill} calls it
 * holding its lock.
 *
 * <p>Invariants: a range is TODO, IN_FLIGHT or DONE; only {@link #next} moves TODO to IN_FLIGHT, only {@link #landed}
 * moves IN_FLIGHT to DONE, and a failure puts it back to TODO. Each range has its position in its partition's source
 * list; a foreground range that a source does not hold, and any range whose source failed, moves to the next one.
 * A partition with no source left, or whose local file cannot take more bytes, is abandoned: nothing more of it
 * starts, and readers stream it.
 */
public final class FillScheduler {
    /** The source id of the dataset's home (shared FS or object store: runtime/home); peers are their ranks. */
    public static final int HOME = -1;
    private static final byte TODO = PartRanges.TODO;
    private static final byte IN_FLIGHT = PartRanges.IN_FLIGHT;
    private static final byte DONE = PartRanges.DONE;

    /**
     * @param rangeBytes the unit of transfer (an MPJ eager message: see Fill)
     * @param readAhead ranges started ahead of a reader reading small files of a partition in order
     * @param retryNanos how long a background range a peer does not hold yet waits before it is asked again
     * @param notHeldRetries background "not held" answers after which a partition's ranges go to its next source
     */
    public record Config(int rangeBytes, int readAhead, long retryNanos, int notHeldRetries) {
    }

    /** A partition the node keeps: its id (regular p, or -1-i for broadcast i), length and sources in order. */
    public record Part(int id, long bytes, int[] sources) {
    }

    /**
     * How background transfers from one source are shaped (its RangeSource's preferences in ranges: README.md,
     * "Transfers by source"): each covers at most {@code backgroundRanges} consecutive ranges, and
     * {@code backgroundInFlight} > 0 is the source's own bound on them in flight (else the governor's shared one).
     */
    public record Shape(int backgroundRanges, int backgroundInFlight) {
        /** One range a transfer, the governor's shared bound: peers and the shared FS. */
        public static final Shape ONE_RANGE = new Shape(1, 0);

        public Shape {
            if (backgroundRanges < 1 || backgroundInFlight < 0) {
                throw new IllegalArgumentException("a transfer covers >= 1 range; a bound is >= 0");
            }
        }
    }

    /** Ranges [range, range + count) of a partition, from one source, for a reader (foreground) or not. */
    public record Transfer(int part, int range, int count, int source, boolean foreground) {
    }

    private final Config config;
    private final Governor governor;
    private final Map<Integer, PartRanges> parts = new LinkedHashMap<>();
    /** Byte runs readers wait for: {part, offset, length}, oldest first. */
    private final ArrayDeque<long[]> asks = new ArrayDeque<>();
    /** Asks whose ranges are all in flight (or landed): their readers still wait on those ranges' sources. */
    private final List<long[]> riding = new ArrayList<>();
    /** Ranges due ahead of in-order readers: {part, range}. */
    private final ArrayDeque<int[]> ahead = new ArrayDeque<>();
    /** Read-ahead transfers in flight, by {@link PartRanges#key}: their own bound, not the readers'. */
    private final Set<Long> aheadInFlight = new HashSet<>();
    /** Per source, readers' transfers in flight from it: the ones started here and the streamed reads. */
    private final Map<Integer, Integer> readersOn = new HashMap<>();
    /** Sources a reader waits on now, found by {@link #next}: no background starts from them. */
    private final Set<Integer> busy = new HashSet<>();
    /** Per partition: {the range readers read last, the last range named ahead}. */
    private final Map<Integer, int[]> marks = new HashMap<>();
    private final Set<Integer> down = new HashSet<>();
    /** The home's mark-down (README.md, "A silent home"): never, unless {@link Fill} gives its own. */
    private HomeOutage outage = new HomeOutage(0);
    /** Set by {@link #next}: the home is marked down now, so nothing starts from it. */
    private boolean homeBlocked;
    private final IntFunction<Shape> shapes;
    private int foreground;
    /** Set by {@link #room}: some background candidate was passed over because its bound was full. */
    private boolean held;
    /** Background transfers in flight from sources under the governor's shared bound. */
    private int background;
    /** Background transfers in flight from each source with a bound of its own. */
    private final Map<Integer, Integer> ownBackground = new HashMap<>();

    /** Every source one range a transfer under the governor's shared bound ({@link Shape#ONE_RANGE}). */
    public FillScheduler(Config config, Governor governor, List<Part> plan) {
        this(config, governor, plan, source -> Shape.ONE_RANGE);
    }

    /** @param shapes by source id ({@link #HOME}, peer ranks): how its background transfers are shaped */
    public FillScheduler(Config config, Governor governor, List<Part> plan, IntFunction<Shape> shapes) {
        this.config = config;
        this.governor = governor;
        this.shapes = shapes;
        for (Part p : plan) {
            parts.put(p.id(), new PartRanges(p, config.rangeBytes()));
        }
    }

    void outage(HomeOutage o) {
        this.outage = o;
    }

    /** Whether a reader of bytes [offset, offset + length) of p would wait on the home while it is marked down. */
    public boolean waitsOnDownHome(int p, long offset, long length, long now) {
        PartRanges s = parts.get(p);
        int r = s == null || !outage.blocks(now) ? -1 : s.firstTodo(offset, length);
        return r >= 0 && sourceOf(s, r) == HOME;
    }

    /** Whether partition p is being filled or complete here (kept and not abandoned). */
    public boolean keeps(int p) {
        PartRanges s = parts.get(p);
        return s != null && !s.abandoned;
    }

    public boolean complete(int p) {
        PartRanges s = parts.get(p);
        return s != null && s.done == s.range.length;
    }

    /** Whether bytes [offset, offset + length) of p have all landed. */
    public boolean covers(int p, long offset, long length) {
        PartRanges s = parts.get(p);
        return s != null && s.covers(offset, length);
    }

    /** The partition's sources in order, without the ones that failed: where a reader streams it from. */
    public int[] sources(int p, int[] ifUnknown) {
        PartRanges s = parts.get(p);
        int[] all = s != null ? s.part.sources() : ifUnknown;
        return java.util.Arrays.stream(all).filter(src -> !down.contains(src)).toArray();
    }

    /** Source is lost or stalled: not asked again for anything (a reader streaming from it found out). */
    public void down(int source) {
        if (source != HOME) {
            down.add(source);
        }
    }

    /**
     * A reader waits for bytes [offset, offset + length) of p: they go first. A reader of a small file (at most half
     * a range) in the partition's order also has the {@link Config#readAhead} ranges after it made due; a larger
     * read only moves the readers' mark, which orders the background.
     */
    public void want(int p, long offset, long length) {
        PartRanges s = parts.get(p);
        if (s == null || s.abandoned) {
            return;
        }
        int first = s.rangeOf(offset);
        int last = s.rangeOf(offset + Math.max(length, 1) - 1);
        int[] mark = marks.computeIfAbsent(p, k -> new int[] {-2, -1});
        if (length <= config.rangeBytes() / 2) {
            boolean inOrder = first == mark[0] || first == mark[0] + 1;
            int from = Math.max(mark[1], first) + 1;
            int until = Math.min(s.range.length - 1, first + config.readAhead());
            if (inOrder && from <= until) {
                for (int r = from; r <= until; r++) {
                    ahead.add(new int[] {p, r});
                }
                mark[1] = until;
            }
        }
        mark[0] = last;
        if (!covers(p, offset, length)) {
            asks.add(new long[] {p, offset, length});
        }
    }

    /**
     * A reader reads bytes of a partition this node does not keep (or not in time) straight from {@code source}:
     * until {@link #streamEnds}, no background transfer starts from that source, and no prefetch at all.
     */
    public void streamBegins(int source) {
        readersOn.merge(source, 1, Integer::sum);
    }

    /** The streamed read {@link #streamBegins} announced ended (its bytes arrived or it failed). */
    public void streamEnds(int source) {
        readersOn.merge(source, -1, Integer::sum);
    }

    /**
     * The transfers to start now, by class (README.md, "The scheduler"): readers' asks; then ranges ahead of in-order
     * readers, on their own bound; then the background (as the governor allows), only from sources no reader waits
     * on, and prefetch only while no reader waits at all: the range nearest after where readers read, else the
     * plan's order front to back, skipping a partition waiting to ask a peer again.
     */
    public List<Transfer> next(long now) {
        List<Transfer> out = new ArrayList<>();
        homeBlocked = outage.blocks(now);
        while (!asks.isEmpty()) {
            long[] a = asks.peek();
            PartRanges s = parts.get((int) a[0]);
            int r = s == null || s.abandoned ? -1 : s.firstTodo(a[1], a[2]);
            if (r < 0) {
                riding.add(asks.poll());
                continue;
            }
            if (homeBlocked && sourceOf(s, r) == HOME) {
                asks.poll();   // its reader stops waiting (waitsOnDownHome) and is refused at once
                continue;
            }
            if (!governor.mayStartForeground(foreground)) {
                return out;
            }
            out.add(start(s, r, s.rangeOf(a[1] + Math.max(a[2], 1) - 1), Kind.READER));
        }
        for (int[] a; (a = ahead.peek()) != null; ) {
            PartRanges s = parts.get(a[0]);
            if (s == null || s.abandoned || s.range[a[1]] != TODO || homeBlocked && sourceOf(s, a[1]) == HOME) {
                ahead.poll();
                continue;
            }
            if (aheadInFlight.size() >= governor.config().aheadInFlight()) {
                break;
            }
            ahead.poll();
            out.add(start(s, a[1], a[1], Kind.AHEAD));
        }
        findBusy();
        while (true) {
            held = false;
            int[] pick = nextBackground(now);
            if (pick == null) {
                if (held) {
                    governor.countBackground(false);
                }
                return out;
            }
            governor.countBackground(true);
            PartRanges s = parts.get(pick[0]);
            int most = shapes.apply(sourceOf(s, pick[1])).backgroundRanges();
            out.add(start(s, pick[1], Math.min(s.range.length - 1, pick[1] + most - 1), Kind.BACKGROUND));
        }
    }

    /**
     * Fills {@link #busy}: the sources of readers' transfers in flight (started here or streamed), and of the ranges
     * in flight that asks ride on (a reader's range already moving as background or read-ahead when it asked).
     */
    private void findBusy() {
        busy.clear();
        readersOn.forEach((source, n) -> {
            if (n > 0) {
                busy.add(source);
            }
        });
        riding.removeIf(a -> {
            PartRanges s = parts.get((int) a[0]);
            if (s == null || s.abandoned) {
                return true;
            }
            boolean waits = false;
            for (int r = s.rangeOf(a[1]), last = s.rangeOf(a[1] + Math.max(a[2], 1) - 1); r <= last; r++) {
                if (s.range[r] == IN_FLIGHT) {
                    busy.add(sourceOf(s, r));
                    waits = true;
                }
            }
            return !waits;
        });
    }

    /** The earliest time after now a background range waits for (a retry of a peer), or Long.MAX_VALUE. */
    public long wakeAt(long now) {
        long at = outage.wakeAt(now);
        for (PartRanges s : parts.values()) {
            if (!s.abandoned && s.notBefore > now && s.nextTodo() >= 0) {
                at = Math.min(at, s.notBefore);
            }
        }
        return at;
    }

    public void landed(Transfer t) {
        PartRanges s = release(t);
        for (int r = t.range(); r < t.range() + t.count(); r++) {
            s.range[r] = DONE;
            s.done++;
        }
    }

    /**
     * The transfer failed: its ranges start again from their next source; {@code sourceDown} means the source is
     * not asked again for anything (a peer lost or stalled). Returns false when the partition has no source left
     * and is abandoned now.
     */
    public boolean failed(Transfer t, boolean sourceDown) {
        if (sourceDown && t.source() != HOME) {
            down.add(t.source());
        }
        boolean wasAhead = aheadInFlight.contains(PartRanges.key(t.part(), t.range()));
        PartRanges s = release(t);
        for (int r = t.range(); r < t.range() + t.count(); r++) {
            s.range[r] = TODO;
            if (!sourceDown || t.source() != HOME) {   // a silent home is marked down, not passed (HomeOutage)
                s.past(r, t.source());
            }
        }
        again(s, t, wasAhead);
        return sourceOf(s, t.range()) != Integer.MIN_VALUE || abandon(t.part());
    }

    /**
     * The source answered that it does not hold those bytes (yet). When it fills the partition ({@code filling}:
     * README.md, "A prefetch never reads the home while its peer fills") the ranges stay with it while it is not
     * down: a reader's are asked again at once, background ones after {@link Config#retryNanos}. Else a reader's go
     * to the next source at once, background ones after {@link Config#notHeldRetries} answers per partition.
     */
    public boolean notHeld(Transfer t, long now, boolean filling) {
        boolean wasAhead = aheadInFlight.contains(PartRanges.key(t.part(), t.range()));
        PartRanges s = release(t);
        boolean move = !filling && (t.foreground() || ++s.notHeld > config.notHeldRetries());
        for (int r = t.range(); r < t.range() + t.count(); r++) {
            s.range[r] = TODO;
            if (move) {
                s.past(r, t.source());
            }
        }
        if (!move && !t.foreground()) {
            s.notBefore = now + config.retryNanos();
        }
        again(s, t, wasAhead);
        return sourceOf(s, t.range()) != Integer.MIN_VALUE || abandon(t.part());
    }

    /** A transfer's ranges are TODO again: the background front, read-ahead, its ask and asks riding it go back. */
    private void again(PartRanges s, Transfer t, boolean wasAhead) {
        s.nextBackground = Math.min(s.nextBackground, t.range());
        if (wasAhead) {
            ahead.addFirst(new int[] {t.part(), t.range()});
        } else if (t.foreground()) {
            asks.addFirst(new long[] {t.part(), (long) t.range() * config.rangeBytes(),
                    (long) t.count() * config.rangeBytes()});
        }
        riding.removeIf(a -> a[0] == t.part() && s.rangeOf(a[1]) < t.range() + t.count()
                && s.rangeOf(a[1] + Math.max(a[2], 1) - 1) >= t.range() && asks.offerFirst(a));
    }

    /** The transfer could not be written locally: its partition is given up (readers stream it). False, always. */
    public boolean abandon(Transfer t) {
        PartRanges s = release(t);
        for (int r = t.range(); r < t.range() + t.count(); r++) {
            s.range[r] = TODO;
        }
        return abandon(t.part());
    }

    /** Gives partition p up (its file cannot grow, or no source is left): readers stream it. False, always. */
    public boolean abandon(int p) {
        PartRanges s = parts.get(p);
        if (s != null) {
            s.abandoned = true;
        }
        return false;
    }

    /** Whether nothing more will start or land: every partition complete or abandoned, nothing in flight. */
    public boolean finished() {
        if (foreground + background + aheadInFlight.size() > 0
                || ownBackground.values().stream().anyMatch(n -> n > 0)) {
            return false;
        }
        for (PartRanges s : parts.values()) {
            if (!s.abandoned && s.done < s.range.length) {
                return false;
            }
        }
        return true;
    }

    /** One line for the log: each partition's landed ranges of all, and whether it was given up. */
    public String describe() {
        return String.join(" ", parts.values().stream().map(PartRanges::describe).toList());
    }

    private PartRanges release(Transfer t) {
        if (t.foreground() && aheadInFlight.remove(PartRanges.key(t.part(), t.range()))) {
            return parts.get(t.part());
        }
        if (t.foreground()) {
            foreground--;
            readersOn.merge(t.source(), -1, Integer::sum);
        } else if (shapes.apply(t.source()).backgroundInFlight() > 0) {
            ownBackground.merge(t.source(), -1, Integer::sum);
        } else {
            background--;
        }
        return parts.get(t.part());
    }

    /** The classes of transfer, in the order they start (README.md, "The scheduler"). */
    private enum Kind { READER, AHEAD, BACKGROUND }

    /** Starts the run of TODO ranges from r to at most last that share r's source. */
    private Transfer start(PartRanges s, int r, int last, Kind c) {
        int source = sourceOf(s, r);
        if (source == Integer.MIN_VALUE) {
            throw new IllegalStateException("partition " + s.part.id() + " range " + r + " has no source");
        }
        int n = 1;
        while (r + n <= last && s.range[r + n] == TODO && sourceOf(s, r + n) == source) {
            n++;
        }
        for (int i = r; i < r + n; i++) {
            s.range[i] = IN_FLIGHT;
        }
        boolean forReader = c != Kind.BACKGROUND;
        if (c == Kind.AHEAD) {
            aheadInFlight.add(PartRanges.key(s.part.id(), r));
        } else if (c == Kind.READER) {
            foreground++;
            readersOn.merge(source, 1, Integer::sum);
        } else if (shapes.apply(source).backgroundInFlight() > 0) {
            ownBackground.merge(source, 1, Integer::sum);
        } else {
            background++;
        }
        return new Transfer(s.part.id(), r, n, source, forReader);
    }

    /** Range r's source now: its next one in the partition's list that is not down, or MIN_VALUE if none is left. */
    private int sourceOf(PartRanges s, int r) {
        int[] sources = s.part.sources();
        while (s.sourceAt[r] < sources.length && down.contains(sources[s.sourceAt[r]])) {
            s.sourceAt[r]++;
        }
        return s.sourceAt[r] < sources.length ? sources[s.sourceAt[r]] : Integer.MIN_VALUE;
    }

    /**
     * Whether a background transfer from range r's source may start now: no reader waits on that source (nor on any,
     * for a prefetch: a partition not staged in from the home), and the governor's bound for its class has room; a
     * candidate passed over sets {@link #held}.
     */
    private boolean room(PartRanges s, int r) {
        int source = sourceOf(s, r);
        if (homeBlocked && source == HOME) {
            return false;
        }
        if (busy.contains(source) || !s.stageIn && !busy.isEmpty()) {
            held = true;
            return false;
        }
        int own = source == Integer.MIN_VALUE ? 0 : shapes.apply(source).backgroundInFlight();
        boolean room = governor.backgroundRoom(own > 0 ? ownBackground.getOrDefault(source, 0) : background, own);
        held |= !room;
        return room;
    }

    /**
     * {part, range} for the background, or null: nearest after the readers' marks, else plan order; a partition
     * whose next range's source has no room now is passed over.
     */
    private int[] nextBackground(long now) {
        int[] best = null;
        int bestGap = Integer.MAX_VALUE;
        for (Map.Entry<Integer, int[]> m : marks.entrySet()) {
            PartRanges s = parts.get(m.getKey());
            if (s == null || s.abandoned || now < s.notBefore || m.getValue()[0] < 0) {
                continue;
            }
            for (int r = m.getValue()[0]; r < s.range.length && r - m.getValue()[0] < bestGap; r++) {
                if (s.range[r] == TODO) {
                    if (room(s, r)) {
                        best = new int[] {s.part.id(), r};
                        bestGap = r - m.getValue()[0];
                    }
                    break;
                }
            }
        }
        if (best != null) {
            return best;
        }
        for (PartRanges s : parts.values()) {
            if (!s.abandoned && now >= s.notBefore) {
                int r = s.nextTodo();
                if (r >= 0 && room(s, r)) {
                    return new int[] {s.part.id(), r};
                }
            }
        }
        return null;
    }
}
