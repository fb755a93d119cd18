package org.fanstore.runtime.home;

import java.io.IOException;
import java.nio.file.Path;
import java.util.function.IntFunction;
import java.util.function.ObjLongConsumer;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.runtime.fill.source.HomeSource;
import org.fanstore.runtime.fill.source.SharedFsSource;

/** A dataset directory on a shared FS: everything is read in place. */
final class DirectoryHome implements DatasetHome {
    private final Path dir;
    private SharedFsSource source;

    DirectoryHome(Path dir) {
        this.dir = dir;
    }

    @Override
    public String name() {
        return dir.toString();
    }

    @Override
    public Manifest manifest() throws IOException {
        return Manifest.read(dir);
    }

    @Override
    public MetadataTable landTable(boolean reads, TableLander lander) throws IOException {
        return lander.land(dir);
    }

    @Override
    public synchronized HomeSource source(IntFunction<PartitionInfo> infos) {
        source = new SharedFsSource(dir, infos);
        return source;
    }

    @Override
    public void report(ObjLongConsumer<String> field) {
        // the fill counts the shared FS's bytes (bytes_from_sharedfs)
    }

    @Override
    public synchronized void close() {
        if (source != null) {
            source.close();
        }
    }
}
