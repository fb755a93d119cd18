package org.fanstore.runtime.home;

import java.io.IOException;
import java.nio.file.Path;
import java.util.function.IntFunction;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;
import org.fanstore.runtime.fill.source.HomeSource;
import org.fanstore.runtime.stats.RankStats;

/**
 * Where the dataset lives for the job: a directory on a shared FS or a bucket (README.md beside this class). The
 * runtime's load stages ask it for the manifest, the table and the partitions' source; only this package knows
 * which kind it is.
 */
public interface DatasetHome extends RankStats.Gauges, AutoCloseable {
    /** Lands the table from the directory that holds {@code namespace.tbl} (metadata/TableLanding). */
    interface TableLander {
        MetadataTable land(Path tableDir) throws IOException;
    }

    /**
     * The home {@code data} names (a path or {@code s3://BUCKET/PREFIX/NAME.fs}); a bucket's client is made from
     * the environment now ("no credentials" before any work) and its scratch copies go under {@code scratchParent}.
     */
    static DatasetHome open(String data, Path scratchParent) throws IOException {
        DatasetLocation at = DatasetLocation.dataset(data);
        return at.isObjectStore() ? BucketHome.open(at, scratchParent) : new DirectoryHome(at.path());
    }

    /**
     * The one line for a bucket prefix without a manifest: "half uploaded" when other objects of the dataset are
     * there (prep writes the manifest last), else "no dataset". One LIST, on this error path only.
     */
    public static String missingManifest(ObjectStore store, DatasetLocation at) throws IOException {
        String url = "s3://" + at.bucket() + "/" + at.key();
        if (!store.list(at.bucket(), at.key() + "/").isEmpty()) {
            return "dataset half uploaded: " + url + " has no " + Manifest.FILE_NAME + "; run fanstore prep again";
        }
        return "no dataset at " + url + " (no " + Manifest.FILE_NAME + " there): correct the location, or write the"
                + " dataset there with fanstore prep";
    }

    /** As messages name the dataset: the path or the s3:// URL the user gave. */
    String name();

    /** The dataset's manifest (every rank reads it). */
    Manifest manifest() throws IOException;

    /**
     * Lands the table through {@code lander}; {@code reads}: this rank reads {@code namespace.tbl} itself (rank 0,
     * or every rank with --table-load read), else the lander receives it from a peer and the directory is only
     * named in messages.
     */
    MetadataTable landTable(boolean reads, TableLander lander) throws IOException;

    /** The partitions' source (the fill's {@code HOME} slot); closed with the home. */
    HomeSource source(IntFunction<PartitionInfo> infos);

    @Override
    void close();
}
