package org.fanstore.runtime.home;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.function.IntFunction;
import java.util.function.ObjLongConsumer;
import java.util.stream.Stream;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.TableInfo;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;
import org.fanstore.prep.store.StoreException;
import org.fanstore.runtime.fill.source.HomeSource;
import org.fanstore.runtime.fill.source.ObjectStoreSource;
import org.fanstore.runtime.metadata.TableLanding;

/**
 * A dataset in a bucket: the manifest and (on a rank that reads it) the table are copied by GET into a private
 * scratch directory and read there; partitions are read by ranged GETs ({@link ObjectStoreSource}). One client per
 * runtime, closed with the home; its counters are this rank's object-store statistics.
 */
final class BucketHome implements DatasetHome {
    private final DatasetLocation at;
    private final ObjectStore store;
    private final Path scratch;

    private BucketHome(DatasetLocation at, ObjectStore store, Path scratch) {
        this.at = at;
        this.store = store;
        this.scratch = scratch;
    }

    static BucketHome open(DatasetLocation at, Path scratchParent) throws IOException {
        ObjectStore store = ObjectStore.fromEnvironment();
        try {
            return new BucketHome(at, store, Files.createTempDirectory(scratchParent, ".home-"));
        } catch (IOException e) {
            store.close();
            throw e;
        }
    }

    @Override
    public String name() {
        return at.toString();
    }

    @Override
    public Manifest manifest() throws IOException {
        byte[] bytes;
        try {
            bytes = store.get(at.bucket(), at.objectKey(Manifest.FILE_NAME));
        } catch (StoreException e) {
            if (e.reason() == StoreException.Reason.NO_KEY) {
                throw new IOException(DatasetHome.missingManifest(store, at));
            }
            throw e;
        }
        Files.write(scratch.resolve(Manifest.FILE_NAME), bytes);
        return Manifest.read(scratch);
    }

    @Override
    public MetadataTable landTable(boolean reads, TableLander lander) throws IOException {
        TableInfo info = Manifest.read(scratch).table();
        if (info == null) {
            // as the lander refuses it, but naming the s3:// location, not this rank's scratch copy
            throw new IOException(TableLanding.olderFormat(at.toString()));
        }
        if (!reads) {
            return lander.land(scratch);  // received from a peer
        }
        Path copy = scratch.resolve(info.fileName());
        String key = at.objectKey(info.fileName());
        try {
            // the manifest says the table's size: no HEAD before the parallel GETs
            try (FileChannel out = FileChannel.open(copy, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                store.readToFile(at.bucket(), key, 0, info.bytes(), out, 0);
            } catch (StoreException e) {
                if (e.reason() == StoreException.Reason.NO_KEY) {
                    throw new IOException(at.url(info.fileName()) + " is missing (listed in "
                            + at.url(Manifest.FILE_NAME) + "): run fanstore prep again");
                }
                throw e;
            }
            return lander.land(scratch);
        } finally {
            Files.deleteIfExists(copy);
        }
    }

    @Override
    public HomeSource source(IntFunction<PartitionInfo> infos) {
        return new ObjectStoreSource(store, at, infos);
    }

    @Override
    public void report(ObjLongConsumer<String> field) {
        field.accept("bytes_from_objectstore", store.counters().bytesIn());
        field.accept("objectstore_requests", store.counters().requests());
    }

    @Override
    public void close() {
        store.close();
        try (Stream<Path> files = Files.walk(scratch)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            // the rank's local directory goes at teardown anyway
        }
    }
}
