package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The notes' pace and fan-out, with a recording sender in place of MPJ (the job test sends them for real). */
class ReaderNotesTest {
    @Test
    void aRoundPerIntervalHoweverManyRidesStartAndNoneWhileReadersIdle() throws Exception {
        ReaderDemand demand = new ReaderDemand();
        List<int[]> rounds = new CopyOnWriteArrayList<>();
        ReaderNotes notes = new ReaderNotes((peers, timeout) -> rounds.add(peers), demand, 0, 4);
        try {
            Thread.sleep(50);
            assertEquals(0, rounds.size(), "no reader fetched, yet notes went out");
            long until = System.nanoTime() + 300_000_000L;
            int rides = 0;
            while (System.nanoTime() < until) {         // thousands of short rides, as at 128 KiB
                demand.rideStarted();
                demand.rideEnded();
                demand.rideStarted();                   // one always running, so every interval has a round
                rides++;
            }
            int sent = rounds.size();
            assertTrue(rides > 1_000, "too few rides to tell: " + rides);
            assertTrue(sent >= 5 && sent <= 300_000_000L / ReaderNotes.INTERVAL_NANOS + 5,
                    sent + " rounds in 300 ms for " + rides + " rides");
            for (int i = 0; i < rides; i++) {
                demand.rideEnded();
            }
            Thread.sleep(50);
            int after = rounds.size();
            Thread.sleep(100);
            assertEquals(after, rounds.size(), "readers stopped fetching, yet notes went on");
            assertArrayEquals(new int[] {1, 2, 3}, rounds.get(0), "every other rank, the next ones first");
        } finally {
            notes.close();
        }
    }

    @Test
    void aLargeWorldIsNotedInTurnAtMostFanoutPeersARound() throws Exception {
        ReaderDemand demand = new ReaderDemand();
        List<int[]> rounds = new CopyOnWriteArrayList<>();
        ReaderNotes notes = new ReaderNotes((peers, timeout) -> rounds.add(peers), demand, 5, 100);
        try {
            demand.fetchStarted(0);
            long until = System.nanoTime() + 2_000_000_000L;
            while (rounds.size() < 4 && System.nanoTime() < until) {
                Thread.sleep(5);
            }
            demand.fetchEnded();
        } finally {
            notes.close();
        }
        assertTrue(rounds.size() >= 4, "rounds: " + rounds.size());
        List<Integer> noted = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            assertEquals(ReaderNotes.FANOUT, rounds.get(i).length);
            for (int p : rounds.get(i)) {
                noted.add(p);
            }
        }
        assertEquals(6, (int) noted.get(0), "the next rank first");
        assertTrue(noted.stream().allMatch(p -> p != 5), "a rank noted itself");
        assertEquals(99, noted.stream().distinct().count(), "four rounds of 32 cover all 99 peers: " + noted);
    }
}
