package org.fanstore.runtime.fill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.fanstore.runtime.fill.FillScheduler.Part;
import org.fanstore.runtime.fill.FillScheduler.Transfer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/**
 * The scheduler as a table: a plan, a script of events, and the transfers each {@code next} must return. Ranges are
 * 100 bytes; partition 0 is the rank's own (shared FS only), partition 1 a peer's (rank 1, then the shared FS).
 * Transfers are written "part:range+count@source/f|b" (source -1 is the shared FS, f = foreground).
 */
class FillSchedulerTest {
    private static final int FS = FillScheduler.HOME;
    private static final FillScheduler.Config CONFIG = new FillScheduler.Config(100, 2, 50, 2);

    private static FillScheduler scheduler(int background) {
        Governor g = new Governor(new Governor.Config(background, 8), () -> 0);
        return new FillScheduler(CONFIG, g, List.of(new Part(0, 400, new int[] {FS}),
                new Part(1, 300, new int[] {1, FS})));
    }

    static Stream<Arguments> scripts() {
        return Stream.of(
                // background alone: the plan's order front to back, bounded by the governor
                Arguments.of("background in plan order, two in flight", 2, new String[] {
                    "next -> 0:0+1@-1/b 0:1+1@-1/b",
                    "next ->",
                    "land 0:0+1@-1/b",
                    "next -> 0:2+1@-1/b"}),
                // a reader's ask goes before the background, as one run of its ranges
                Arguments.of("a reader's ask first, as one run", 1, new String[] {
                    "want 1 50 200",
                    "next -> 1:0+3@1/f 0:0+1@-1/b"}),
                // a small in-order read marks the ranges ahead; they start as foreground after the ask
                Arguments.of("read-ahead after two in-order reads", 0, new String[] {
                    "want 0 0 10",
                    "next -> 0:0+1@-1/f",
                    "land 0:0+1@-1/f",
                    "want 0 100 10",
                    "next -> 0:1+1@-1/f 0:2+1@-1/f 0:3+1@-1/f"}),
                // a foreground "not held" goes to the next source at once
                Arguments.of("not held: a reader's range moves to the shared FS", 0, new String[] {
                    "want 1 0 10",
                    "next -> 1:0+1@1/f",
                    "notheld 1:0+1@1/f 0",
                    "next -> 1:0+1@-1/f"}),
                // a background "not held" waits, then asks the same peer; after the retries, the next source
                Arguments.of("not held: background retries the peer, then moves on", 1, new String[] {
                    "land-all 0",
                    "next -> 1:0+1@1/b",
                    "notheld 1:0+1@1/b 0",
                    "next@10 ->",
                    "next@60 -> 1:0+1@1/b",
                    "notheld 1:0+1@1/b 60",
                    "next@200 -> 1:0+1@1/b",
                    "notheld 1:0+1@1/b 200",
                    "next@300 -> 1:0+1@-1/b"}),
                // a peer that failed is not asked again, for any partition
                Arguments.of("a lost peer: the shared FS serves the range", 0, new String[] {
                    "want 1 0 250",
                    "next -> 1:0+3@1/f",
                    "down 1:0+3@1/f",
                    "want 1 0 250",
                    "next -> 1:0+3@-1/f"}),
                // every peer marked down while a range is in flight from one (a node lost: Fill.peersDown), then
                // that transfer fails: the range goes to the shared FS once, the partition is still kept
                Arguments.of("peers down mid-transfer: the shared FS serves, the partition is kept", 0, new String[] {
                    "want 1 0 250",
                    "next -> 1:0+3@1/f",
                    "peerdown 1",
                    "next ->",
                    "down 1:0+3@1/f",
                    "want 1 0 250",
                    "next -> 1:0+3@-1/f"}));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scripts")
    void followsTheScript(String name, int background, String[] script) {
        FillScheduler s = scheduler(background);
        for (String step : script) {
            String[] w = step.split(" ");
            switch (w[0]) {
                case "want" -> s.want(Integer.parseInt(w[1]), Long.parseLong(w[2]), Long.parseLong(w[3]));
                case "land" -> s.landed(parse(w[1]));
                case "land-all" -> landAll(s, Integer.parseInt(w[1]));
                case "notheld" -> s.notHeld(parse(w[1]), Long.parseLong(w[2]), false);
                case "notyet" -> s.notHeld(parse(w[1]), Long.parseLong(w[2]), true);
                case "down" -> assertTrue(s.failed(parse(w[1]), true), step + ": the partition was given up");
                case "peerdown" -> s.down(Integer.parseInt(w[1]));
                default -> {
                    long now = w[0].contains("@") ? Long.parseLong(w[0].substring(w[0].indexOf('@') + 1)) : 0;
                    List<String> got = new ArrayList<>();
                    s.next(now).forEach(t -> got.add(format(t)));
                    List<String> want = new ArrayList<>();
                    for (int i = 2; i < w.length; i++) {
                        want.add(w[i]);
                    }
                    assertEquals(want, got, step);
                }
            }
        }
    }

    /**
     * Issue 45: a prefetch whose peer fills the partition ("notyet": NOT_HELD with the partition's length) asks that
     * peer again, never the shared FS, however often, until the peer is down; on main's scheduler the third answer
     * (retries 2 here) moved the range to the shared FS, which then read those bytes a second time.
     */
    @Test
    void aPrefetchNeverReadsTheHomeWhileItsPeerFills() {
        followsTheScript("prefetch from a filling peer", 1, new String[] {
            "land-all 0",
            "next -> 1:0+1@1/b",
            "notyet 1:0+1@1/b 0",
            "next@10 ->",
            "next@60 -> 1:0+1@1/b",
            "notyet 1:0+1@1/b 60",
            "next@200 -> 1:0+1@1/b",
            "notyet 1:0+1@1/b 200",
            "next@300 -> 1:0+1@1/b",
            "notyet 1:0+1@1/b 300",
            "next@400 -> 1:0+1@1/b",
            "land 1:0+1@1/b",
            "next@400 -> 1:1+1@1/b",
            "notyet 1:1+1@1/b 400",
            "next@500 -> 1:1+1@1/b",
            "down 1:1+1@1/b",
            "next@500 -> 1:1+1@-1/b"});
    }

    /**
     * Issue 45: a reader's range whose holder fills the partition (NOT_HELD after the holder's own 1 s wait for it)
     * is asked of that holder again at once, not of the shared FS, which would send it twice; it moves on only when
     * the peer is down. On main's scheduler it went to the shared FS at the first answer.
     */
    @Test
    void aReadersRangeStaysWithAFillingHolder() {
        followsTheScript("a reader's range and a filling holder", 0, new String[] {
            "want 1 0 250",
            "next -> 1:0+3@1/f",
            "notyet 1:0+3@1/f 0",
            "next -> 1:0+3@1/f",
            "notyet 1:0+3@1/f 0",
            "next -> 1:0+3@1/f",
            "land 1:0+3@1/f",
            "want 1 0 250",
            "next ->"});
        followsTheScript("a reader's range, then its holder is down", 0, new String[] {
            "want 1 0 250",
            "next -> 1:0+3@1/f",
            "notyet 1:0+3@1/f 0",
            "next -> 1:0+3@1/f",
            "down 1:0+3@1/f",
            "want 1 0 250",
            "next -> 1:0+3@-1/f"});
    }

    /**
     * Issue 45: a reader whose range was already in flight as background rides it; when that transfer comes back
     * NOT_HELD (a prefetch reaching the peer's stage-in front) or fails, the reader's ask starts again at once. On
     * main's scheduler the ask was dropped with the ride: the reader waited for its own deadline, then read the
     * home, while the range waited for a background retry.
     */
    @Test
    void aReaderRidingABackgroundRangeThatComesBackAsksAgain() {
        followsTheScript("a ride that comes back not held", 1, new String[] {
            "land-all 0",
            "next -> 1:0+1@1/b",
            "want 1 0 10",
            "next ->",
            "notyet 1:0+1@1/b 0",
            "next -> 1:0+1@1/f"});
        followsTheScript("a ride whose peer is lost", 1, new String[] {
            "land-all 0",
            "next -> 1:0+1@1/b",
            "want 1 0 10",
            "next ->",
            "down 1:0+1@1/b",
            "next -> 1:0+1@-1/f"});
    }

    /** Lands every range of partition p through a foreground ask, and whatever background started beside it. */
    private static void landAll(FillScheduler s, int p) {
        s.want(p, 0, 1 << 20);
        for (Transfer t : s.next(0)) {
            s.landed(t);
        }
        assertTrue(s.complete(p));
    }

    @Test
    void aPartitionWithNoSourceLeftIsAbandonedAndNothingMoreStarts() {
        FillScheduler s = scheduler(0);
        s.want(0, 0, 10);
        Transfer t = s.next(0).get(0);
        assertFalse(s.failed(t, false), "the shared FS was its only source");
        assertFalse(s.keeps(0));
        s.want(0, 0, 10);
        assertEquals(List.of(), s.next(0));
        assertTrue(s.keeps(1));
    }

    /**
     * A silent home (README.md, "A silent home"): while it is marked down nothing starts from it, a reader's ask that
     * only it can serve is dropped (its reader is told so, not left to wait), a transfer that failed so keeps the home
     * as its source (before, the partition was abandoned), a peer still serves; after the mark-down the home's ranges
     * start again.
     */
    @Test
    void aMarkedDownHomeStartsNothingAndKeepsItsPartitions() {
        FillScheduler s = scheduler(1);
        HomeOutage o = new HomeOutage(1_000);
        s.outage(o);
        Transfer t = s.next(0).get(0);
        assertEquals("0:0+1@-1/b", format(t));
        assertTrue(o.silent(10), "a new outage");
        assertTrue(s.failed(t, true), "the home is not passed over: the partition is kept");
        assertTrue(s.keeps(0));
        s.want(0, 0, 10);
        assertTrue(s.waitsOnDownHome(0, 0, 10, 20), "its reader would wait on the marked-down home");
        assertFalse(s.waitsOnDownHome(0, 0, 10, 1_010), "not after the mark-down");
        s.want(1, 0, 10);
        assertEquals(List.of("1:0+1@1/f"), next(s, 20), "the peer serves; the home starts nothing");
        assertEquals(1_010, s.wakeAt(20), "the driver looks again when the mark-down ends");
        assertEquals(List.of("0:0+1@-1/b"), next(s, 1_010), "after it: the home's ranges move again");
        assertEquals(HomeOutage.Admit.REFUSE, o.admit(500, true));
        assertEquals(HomeOutage.Admit.PROBE, o.admit(1_010, true), "one reader tries it");
        assertEquals(HomeOutage.Admit.REFUSE, o.admit(1_011, true), "the others wait for that one's outcome");
        assertEquals(HomeOutage.Admit.GO, o.admit(1_011, false), "the fill's transfers go after the mark-down");
        assertEquals(1_000, o.answered(1_010));
        assertEquals(HomeOutage.Admit.GO, o.admit(1_020, true), "an answer ends the outage");
        assertEquals(2, o.refused());
    }

    @Test
    void aLocalWriteFailureGivesThePartitionUpAndFreesItsSlot() {
        FillScheduler s = scheduler(1);
        Transfer t = s.next(0).get(0);
        assertEquals("0:0+1@-1/b", format(t));
        assertFalse(s.abandon(t));
        assertFalse(s.keeps(0), "abandoned, not retried from a next source");
        assertEquals(List.of("1:0+1@1/b"), s.next(0).stream().map(FillSchedulerTest::format).toList(),
                "its background slot is free again for the next partition");
    }

    @Test
    void coversOnlyLandedRangesAndFinishesWhenAllLanded() {
        FillScheduler s = scheduler(8);
        List<Transfer> all = s.next(0);
        assertEquals(7, all.size());
        assertFalse(s.covers(0, 0, 1));
        all.forEach(s::landed);
        assertTrue(s.covers(0, 0, 400) && s.covers(1, 299, 1));
        assertTrue(s.finished());
    }

    @Test
    void governorCountsItsDecisions() {
        Governor g = new Governor(new Governor.Config(1, 1), () -> 0);
        FillScheduler s = new FillScheduler(CONFIG, g, List.of(new Part(0, 400, new int[] {FS})));
        s.want(0, 0, 10);
        s.want(0, 300, 10);
        assertEquals(1, s.next(0).size(), "one foreground slot: the second ask waits, and no background starts");
        assertEquals(1, g.foregroundStarts());
        assertEquals(1, g.foregroundHeld());
    }

    /**
     * Issue 45, "a reader's bytes first, always": while a reader's transfer from a source is in flight, no background
     * transfer starts from that source; the background resumes when the reader's bytes landed. Before, 2 background
     * ranges started beside the reader's, sharing the source with it.
     */
    @Test
    void aReaderNeverWaitsBehindBackgroundOnItsSource() {
        FillScheduler s = scheduler(2);
        s.want(0, 0, 10);
        assertEquals(List.of("0:0+1@-1/f"), next(s), "the reader's range alone: the home is the reader's");
        assertEquals(List.of(), next(s), "still the reader's while its range is in flight");
        s.landed(parse("0:0+1@-1/f"));
        assertEquals(List.of("0:1+1@-1/b", "0:2+1@-1/b"), next(s), "the readers left the home: the stage-in goes on");
    }

    /**
     * Read-ahead has a bound of its own: ranges ahead of one reader in flight never hold another reader's ask. Before,
     * both counted against the readers' bound, and the second reader waited behind the first one's read-ahead.
     */
    @Test
    void aReaderNeverWaitsBehindAnothersReadAhead() {
        Governor g = new Governor(new Governor.Config(0, 2), () -> 0);
        FillScheduler s = new FillScheduler(CONFIG, g, List.of(new Part(0, 400, new int[] {FS}),
                new Part(1, 300, new int[] {1, FS})));
        s.want(0, 0, 10);
        assertEquals(List.of("0:0+1@-1/f"), next(s));
        s.landed(parse("0:0+1@-1/f"));
        s.want(0, 100, 10);
        List<String> first = next(s);
        assertEquals("0:1+1@-1/f", first.get(0), "the in-order reader's own range first");
        s.want(1, 0, 10);
        assertEquals(List.of("1:0+1@1/f"), next(s), "another reader's range starts at once beside the read-ahead");
    }

    /**
     * Prefetch (a peer's partition kept here) runs only while no reader on this node waits, whatever the source;
     * the rank's own stage-in goes on from a source the reader does not use. Before, the range after the reader's
     * in the peer's partition started first, beside the reader's.
     */
    @Test
    void prefetchWaitsWhileAnyReaderOfThisNodeWaits() {
        FillScheduler s = scheduler(2);
        s.want(1, 0, 10);
        assertEquals(List.of("1:0+1@1/f", "0:0+1@-1/b", "0:1+1@-1/b"), next(s),
                "the reader's range from the peer; the home's stage-in beside it; no prefetch");
        s.landed(parse("1:0+1@1/f"));
        s.landed(parse("0:0+1@-1/b"));
        assertEquals(List.of("1:1+1@1/b"), next(s), "no reader left: the prefetch resumes after the reader's range");
    }

    /**
     * A reader streaming a partition not kept here (OpenService through Fill.stream) counts as a reader of its
     * source: the stage-in from that source and every prefetch wait until it ends.
     */
    @Test
    void aStreamedReaderHoldsTheBackgroundOfItsSource() {
        FillScheduler s = scheduler(2);
        s.streamBegins(FS);
        assertEquals(List.of(), next(s), "the home is the streaming reader's; no prefetch while a reader waits");
        s.streamEnds(FS);
        s.streamBegins(1);
        assertEquals(List.of("0:0+1@-1/b", "0:1+1@-1/b"), next(s), "a reader on the peer leaves the home to the"
                + " stage-in, not to the prefetch");
        s.streamEnds(1);
        s.landed(parse("0:0+1@-1/b"));
        assertEquals(List.of("0:2+1@-1/b"), next(s), "the next range of the plan: the own partition still first");
    }

    /**
     * The home as an object store (README.md, "Transfers by source"): background transfers of up to 3 ranges, 4 of
     * them in flight on its own bound; the peer one range, under the governor's shared bound of 1.
     */
    private static FillScheduler shapedScheduler(Governor g) {
        return new FillScheduler(CONFIG, g, List.of(new Part(0, 400, new int[] {FS}),
                new Part(1, 300, new int[] {1, FS})), src -> src == FS ? new FillScheduler.Shape(3, 4)
                : FillScheduler.Shape.ONE_RANGE);
    }

    private static List<String> next(FillScheduler s) {
        return next(s, 0);
    }

    private static List<String> next(FillScheduler s, long now) {
        return s.next(now).stream().map(FillSchedulerTest::format).toList();
    }

    @Test
    void aBackgroundTransferFromTheStoreSpansItsPreferredRangesAndItsOwnBound() {
        Governor g = new Governor(new Governor.Config(1, 8), () -> 0);
        FillScheduler s = shapedScheduler(g);
        assertEquals(List.of("0:0+3@-1/b", "0:3+1@-1/b", "1:0+1@1/b"), next(s),
                "the home's runs of 3 ranges (the partition's last run shorter) on its own bound; the peer's one"
                        + " range on the shared bound");
        assertEquals(List.of(), next(s), "the shared bound is full: the peer's next range waits");
        assertEquals(2, g.backgroundHeld(), "each next that passed the peer's range over counts once");
        s.landed(parse("1:0+1@1/b"));
        assertEquals(List.of("1:1+1@1/b"), next(s));
    }

    @Test
    void aReadersRangeIsFirstAndExactAndTheStoresLongTransfersWait() {
        Governor g = new Governor(new Governor.Config(1, 8), () -> 0);
        FillScheduler s = shapedScheduler(g);
        s.want(0, 250, 10);
        assertEquals(List.of("0:2+1@-1/f"), next(s),
                "the reader's one range alone: the home's runs and the prefetch wait while it is in flight");
        s.want(1, 250, 10);
        assertEquals(List.of("1:2+1@1/f"), next(s), "a reader's range from the peer: foreground, still one range");
        s.landed(parse("0:2+1@-1/f"));
        assertEquals(List.of("0:3+1@-1/b", "0:0+2@-1/b"), next(s),
                "the home is free again: its runs, stopping at ranges landed; the peer's reader still holds prefetch");
    }

    @Test
    void theStoreOwnBoundHoldsItsBackgroundWhileThePeersShareTheGovernors() {
        Governor g = new Governor(new Governor.Config(0, 8), () -> 0);
        FillScheduler s = new FillScheduler(CONFIG, g, List.of(new Part(0, 900, new int[] {FS})),
                src -> new FillScheduler.Shape(2, 2));
        assertEquals(List.of("0:0+2@-1/b", "0:2+2@-1/b"), next(s), "two in flight: the store's own bound");
        assertEquals(List.of(), next(s));
        s.landed(parse("0:0+2@-1/b"));
        assertEquals(List.of("0:4+2@-1/b"), next(s));
        assertFalse(s.finished());
    }

    @Test
    void aSourcesPreferredBytesBecomeWholeRanges() {
        assertEquals(FillScheduler.Shape.ONE_RANGE, Fill.shape(null));
        assertEquals(new FillScheduler.Shape(1, 0), Fill.shape(source(0, 0)), "the default: one range");
        assertEquals(new FillScheduler.Shape(16, 8), Fill.shape(source(8 << 20, 8)),
                "8 MiB: 16 ranges of 508 KiB, one GET");
        assertEquals(new FillScheduler.Shape(1, 0), Fill.shape(source(100, 0)), "less than a range: one range");
    }

    private static org.fanstore.runtime.fill.source.RangeSource source(long bytes, int inFlight) {
        return new org.fanstore.runtime.fill.source.RangeSource() {
            @Override
            public String kind() {
                return "test";
            }

            @Override
            public void read(int p, long position, long length, java.nio.channels.WritableByteChannel sink,
                             boolean forReader) {
            }

            @Override
            public long preferredTransferBytes() {
                return bytes;
            }

            @Override
            public int backgroundInFlight() {
                return inFlight;
            }
        };
    }

    private static String format(Transfer t) {
        return t.part() + ":" + t.range() + "+" + t.count() + "@" + t.source() + "/" + (t.foreground() ? "f" : "b");
    }

    private static Transfer parse(String s) {
        String[] a = s.split("[:+@/]");
        return new Transfer(Integer.parseInt(a[0]), Integer.parseInt(a[1]), Integer.parseInt(a[2]),
                Integer.parseInt(a[3]), a[4].equals("f"));
    }
}
