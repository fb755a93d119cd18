package org.fanstore.runtime.liveness;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class RankFailedExceptionTest {
    @Test
    void aRanksLogLineNamesItOnce() {
        assertEquals("fanstore rank 0: rank 1 died", RankFailedException.logLine(0, "rank 0: rank 1 died"));
        assertEquals("fanstore rank 2: rank 0: not me", RankFailedException.logLine(2, "rank 0: not me"));
        assertEquals("fanstore rank 1: rank 10: a fetch", RankFailedException.logLine(1, "rank 10: a fetch"));
    }
}
