package org.fanstore.runtime.fill.source;

import java.io.IOException;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.function.IntFunction;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.PartitionReader;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;
import org.fanstore.prep.store.StoreException;
import org.fanstore.prep.store.StoreTiming;

/**
 * The partition objects of a dataset in a bucket ({@code PREFIX/NAME.fs/<partition file>}): ranged GETs only, the
 * exact range asked for (a reader's first), large ranges in parallel parts delivered in order; never one request
 * per sample. A store that stays silent past the client's bounds (prep/store README) is reported as down.
 */
public final class ObjectStoreSource implements HomeSource {
    /**
     * Background transfers from the store at most in flight on a bound of its own, or 0: the governor's bound shared
     * with the other sources (2). 0 until an A/B shows more pays with readers racing the fill: with 8 MiB GETs, 8
     * in flight filled 2 MiB files 20-30% sooner than 2 and 112 KiB ones no sooner, and no reader waited on the fill
     * in either (docs/decisions/object-store-fill.md). {@code -Dfanstore.fill.objectstore.background=N} for those
     * A/Bs, not a user knob.
     */
    public static final int BACKGROUND_IN_FLIGHT = 0;
    private final int backgroundInFlight = Integer.getInteger("fanstore.fill.objectstore.background",
            BACKGROUND_IN_FLIGHT);
    private final ObjectStore store;
    private final DatasetLocation dataset;
    private final IntFunction<PartitionInfo> infos;

    /** @param infos partition id (regular p, or -1-i for broadcast i) to its manifest line */
    public ObjectStoreSource(ObjectStore store, DatasetLocation dataset, IntFunction<PartitionInfo> infos) {
        if (!dataset.isObjectStore()) {
            throw new IllegalArgumentException(dataset + " is not in an object store");
        }
        this.store = store;
        this.dataset = dataset;
        this.infos = infos;
    }

    @Override
    public String kind() {
        return "objectstore";
    }

    /**
     * Checks partition p's object: its size against the manifest and its fixed header, as {@link SharedFsSource#check}
     * does for a file, in one ranged GET (its Content-Range says the size): a missing, foreign or damaged object is
     * refused before the command starts. A store refusing the range (an empty object) is asked its size by HEAD.
     */
    @Override
    public void check(int p) throws IOException {
        PartitionInfo info = infos.apply(p);
        String key = dataset.objectKey(info.fileName());
        long size;
        byte[] first;
        try {
            ObjectStore.First got = store.readFirst(dataset.bucket(), key, PartitionDescriptor.HEADER_LENGTH);
            size = got.size();
            first = got.bytes();
        } catch (StoreException e) {
            if (e.reason() == StoreException.Reason.NO_KEY) {
                throw new IOException("partition " + info.fileName() + " (listed in the manifest) is missing from "
                        + dataset + ": run fanstore prep again");
            }
            if (e.reason() == StoreException.Reason.NOT_ANSWERING) {
                throw e;
            }
            size = store.size(dataset.bucket(), key);   // e.g. 416 for an empty object: its size says why
            first = new byte[0];
        }
        if (size != info.bytes()) {
            throw new IOException(String.format("partition %s in %s is damaged: %d bytes, the manifest says %d"
                    + " bytes; run fanstore prep again", info.fileName(), dataset, size, info.bytes()));
        }
        if (first.length < Math.min(size, PartitionDescriptor.HEADER_LENGTH)) {
            throw headerUnread(info, size);
        }
        PartitionReader.Header h = PartitionReader.checkHeader(Path.of(dataset.url(info.fileName())), first, size);
        if (h.entryCount() != info.entries() || h.index() != info.index() || h.broadcast() != info.broadcast()) {
            throw new IOException(String.format("partition %s in %s holds %d entries as %s partition %d, the"
                    + " manifest says %d entries as %s partition %d; run fanstore prep again", info.fileName(),
                    dataset, h.entryCount(), h.broadcast() ? "broadcast" : "regular", h.index(), info.entries(),
                    info.broadcast() ? "broadcast" : "regular", info.index()));
        }
    }

    /** The store refused the header's range of an object whose size matches the manifest. */
    private IOException headerUnread(PartitionInfo info, long size) {
        return new IOException("partition " + info.fileName() + " of " + dataset + " (" + size + " bytes) did not"
                + " answer a read of its header: run fanstore verify " + dataset);
    }

    /** One GET's worth ({@link StoreTiming#READ_PART_BYTES}, 8 MiB): the store's round trip paid once per part. */
    @Override
    public long preferredTransferBytes() {
        return StoreTiming.READ_PART_BYTES;
    }

    @Override
    public int backgroundInFlight() {
        return backgroundInFlight;
    }

    @Override
    public String name() {
        return dataset.toString();
    }

    @Override
    public void read(int p, long position, long length, WritableByteChannel sink, boolean forReader)
            throws IOException {
        read(p, position, length, sink, ObjectStore.NO_DEADLINE);
    }

    /**
     * A reader's read, ended at its deadline (home/README.md, "A silent store"): a store that answered nothing by then
     * is down ({@link SourceDownException}); one that answers, but too slowly, fails this read only.
     */
    @Override
    public void read(int p, long position, long length, WritableByteChannel sink, long deadline)
            throws IOException {
        PartitionInfo info = infos.apply(p);
        if (position < 0 || length < 0 || position + length > info.bytes()) {
            throw new IOException("bytes " + position + "+" + length + " lie outside partition " + info.fileName()
                    + " of " + dataset + " (" + info.bytes() + " bytes)");
        }
        try {
            store.readParallel(dataset.bucket(), dataset.objectKey(info.fileName()), position, length, sink,
                    deadline);
        } catch (StoreException e) {
            if (e.reason() == StoreException.Reason.NOT_ANSWERING) {
                throw new SourceDownException(e.getMessage(), e);
            }
            throw e;
        }
    }

    /** The store is the home's (runtime/home): it closes it. */
    @Override
    public void close() {
    }
}
