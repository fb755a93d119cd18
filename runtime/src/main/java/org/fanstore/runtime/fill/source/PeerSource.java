package org.fanstore.runtime.fill.source;

import java.io.IOException;
import java.nio.channels.WritableByteChannel;
import java.time.Duration;
import org.fanstore.runtime.liveness.RankFailedException;
import org.fanstore.runtime.fetch.RemoteFetchException;
import org.fanstore.runtime.fetch.RemoteFetcher;
import org.fanstore.runtime.placement.LocalPartitions;

/**
 * A peer rank: one MPJ range fetch of its copy of the partition (complete, or the ranges landed so far). A peer
 * silent for {@code stall} is reported as down and the caller moves on: whether it died is for the liveness watch
 * to say (docs/reliability.md); a slow peer must not keep a reader from the next source.
 */
public final class PeerSource implements RangeSource {
    private final RemoteFetcher fetcher;
    private final int rank;
    private final Duration stall;

    public PeerSource(RemoteFetcher fetcher, int rank, Duration stall) {
        this.fetcher = fetcher;
        this.rank = rank;
        this.stall = stall;
    }

    @Override
    public String kind() {
        return "peer";
    }

    @Override
    public void read(int p, long position, long length, WritableByteChannel sink, boolean forReader)
            throws IOException {
        long object = LocalPartitions.partitionObject(p);
        try {
            fetcher.fetchRangeQuietly(rank, object, position, length, sink, stall, forReader);
        } catch (RemoteFetchException e) {
            if (e.reason() == RemoteFetchException.Reason.NOT_HELD) {
                throw new NotHeldException("rank " + rank + " does not hold those bytes of partition " + p
                        + (e.ownerFills() ? " yet" : ""), e.ownerFills());
            }
            throw e;
        } catch (RankFailedException e) {
            throw new SourceDownException(e.getMessage(), e);
        }
    }
}
