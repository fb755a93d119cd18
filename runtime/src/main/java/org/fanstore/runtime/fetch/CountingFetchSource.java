package org.fanstore.runtime.fetch;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.fanstore.runtime.stats.RankStats;

/** The rank's fetch source as peers see it, counting the bytes it serves them (reader fetches and pulls). */
public final class CountingFetchSource implements FetchSource {
    private final FetchSource inner;
    private final RankStats stats;

    public CountingFetchSource(FetchSource inner, RankStats stats) {
        this.inner = inner;
        this.stats = stats;
    }

    @Override
    public long length(long id) throws IOException {
        return inner.length(id);
    }

    @Override
    public boolean holds(long id, long position, long length, boolean reader) {
        return inner.holds(id, position, length, reader);
    }

    @Override
    public void read(long id, long position, ByteBuffer dst) throws IOException {
        int n = dst.remaining();
        inner.read(id, position, dst);
        stats.served(n);
    }
}
