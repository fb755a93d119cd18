package org.fanstore.launcher;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.PartitionReader;
import org.fanstore.prep.format.TableInfo;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;
import org.fanstore.runtime.home.DatasetHome;

/**
 * A dataset in a bucket seen through a local sparse mirror (prep/README.md, "verify, ls, stat, cat, upgrade on
 * s3://"): the manifest and the table downloaded whole, each partition a sparse file of its object's size holding
 * its header and file table; bodies are range-read into place on demand, so the local inspection code runs
 * unchanged on {@link #dir()}. The mirror lives under the launcher's temporary directory and is removed on close.
 */
final class StoreDataset implements AutoCloseable {
    private final ObjectStore store;
    private final DatasetLocation location;
    private final Path dir;
    private final Manifest manifest;

    private StoreDataset(final ObjectStore store, final DatasetLocation location, final Path dir,
        final Manifest manifest) {
        this.store = store;
        this.location = location;
        this.dir = dir;
        this.manifest = manifest;
    }

    /** Opens {@code location}: one line naming it when it has no manifest (half uploaded, or nothing there). */
    static StoreDataset open(final ObjectStore store, final DatasetLocation location) throws IOException {
        final String bucket = location.bucket();
        final String manifestKey = location.objectKey(Manifest.FILE_NAME);
        if (store.head(bucket, manifestKey).isEmpty()) {
            throw new UserError(DatasetHome.missingManifest(store, location));
        }
        final Path dir = Files.createTempDirectory("fanstore-s3-" + location.name() + "-");
        try {
            Files.write(dir.resolve(Manifest.FILE_NAME), store.get(bucket, manifestKey));
            final Manifest manifest = Manifest.read(dir);
            final StoreDataset d = new StoreDataset(store, location, dir, manifest);
            final TableInfo table = manifest.table();
            if (table != null) {
                d.download(table.fileName(), table.bytes());
            }
            for (final PartitionInfo p : manifest.partitions()) {
                d.mirrorHead(p);
            }
            return d;
        } catch (final IOException | RuntimeException e) {
            LauncherTmp.deleteTree(dir);
            throw e;
        }
    }

    Path dir() {
        return dir;
    }

    Manifest manifest() {
        return manifest;
    }

    /** Messages name the mirror's files; the user knows the dataset by its URL. */
    String rename(final String message) {
        return message.replace(dir.toString() + "/", "s3://" + location.bucket() + "/" + location.key() + "/")
            .replace(dir.toString(), "s3://" + location.bucket() + "/" + location.key());
    }

    private void download(final String fileName, final long bytes) throws IOException {
        try (FileChannel out = FileChannel.open(dir.resolve(fileName), StandardOpenOption.CREATE,
            StandardOpenOption.WRITE)) {
            store.readToFile(location.bucket(), location.objectKey(fileName), 0, bytes, out, 0);
        }
    }

    /** A sparse file of the partition's size with its header and file table in place: two ranged GETs. */
    private void mirrorHead(final PartitionInfo p) throws IOException {
        final String key = location.objectKey(p.fileName());
        try (FileChannel out = FileChannel.open(dir.resolve(p.fileName()), StandardOpenOption.CREATE,
            StandardOpenOption.WRITE)) {
            final int headerLength = PartitionDescriptor.HEADER_LENGTH;
            if (p.bytes() < headerLength) {
                out.truncate(0);
                return;   // the local checks name it as truncated
            }
            final ByteBuffer header = ByteBuffer.allocate(headerLength).order(ByteOrder.LITTLE_ENDIAN);
            store.read(location.bucket(), key, 0, header);
            header.flip();
            final long dataOffset = header.getLong(PartitionDescriptor.DATA_OFFSET_OFFSET);
            out.write(header.duplicate(), 0);
            final long tableEnd = Math.min(p.bytes(), Math.max(headerLength, dataOffset));
            if (tableEnd > headerLength) {
                store.readToFile(location.bucket(), key, headerLength, tableEnd - headerLength, out, headerLength);
            }
            extend(out, p.bytes());
        }
    }

    private static void extend(final FileChannel out, final long size) throws IOException {
        if (out.size() < size) {
            out.write(ByteBuffer.allocate(1), size - 1);   // the hole before it takes no room
        }
    }

    /** Fetches one entry's stored bytes into its place in the mirror (one ranged GET). */
    void fetchBody(final String partitionFile, final PartitionEntry e) throws IOException {
        if (e.isDir() || e.storedLength() == 0) {
            return;
        }
        try (FileChannel out = FileChannel.open(dir.resolve(partitionFile), StandardOpenOption.WRITE)) {
            store.readToFile(location.bucket(), location.objectKey(partitionFile), e.bodyOffset(), e.storedLength(),
                out, e.bodyOffset());
        }
    }

    /** Fills a partition whole (parallel ranged GETs), for verify. */
    void fill(final PartitionInfo p) throws IOException {
        try (FileChannel out = FileChannel.open(dir.resolve(p.fileName()), StandardOpenOption.WRITE)) {
            store.readToFile(location.bucket(), location.objectKey(p.fileName()), 0, p.bytes(), out, 0);
        }
    }

    /**
     * Frees a filled partition's blocks, keeping its header, its table and its symlink targets (the table check
     * reads them later).
     */
    void release(final PartitionInfo p) throws IOException {
        final Path file = dir.resolve(p.fileName());
        final java.util.List<PartitionEntry> links = new java.util.ArrayList<>();
        try (PartitionReader reader = PartitionReader.open(file)) {
            for (final PartitionEntry e : reader.entries()) {
                if (e.isSymlink()) {
                    links.add(e);
                }
            }
        } catch (final IOException | RuntimeException corrupt) {
            return;   // the check named it; nothing later reads it
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            final long size = ch.size();
            final int headerLength = PartitionDescriptor.HEADER_LENGTH;
            if (size < headerLength) {
                return;
            }
            final ByteBuffer header = ByteBuffer.allocate(headerLength).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(header, 0);
            final long keep = Math.min(size, Math.max(headerLength, header.getLong(
                PartitionDescriptor.DATA_OFFSET_OFFSET)));
            if (keep > Integer.MAX_VALUE - 8) {
                return;   // a table this large stays as it is
            }
            final ByteBuffer prefix = ByteBuffer.allocate((int)keep);
            ch.read(prefix, 0);
            final ByteBuffer[] targets = new ByteBuffer[links.size()];
            for (int i = 0; i < targets.length; i++) {
                targets[i] = ByteBuffer.allocate((int)links.get(i).storedLength());
                ch.read(targets[i], links.get(i).bodyOffset());
            }
            ch.truncate(0);
            ch.write(prefix.flip(), 0);
            for (int i = 0; i < targets.length; i++) {
                ch.write(targets[i].flip(), links.get(i).bodyOffset());
            }
            extend(ch, size);
        }
    }

    /** Uploads the mirror's table, then its manifest (last: readers never see a manifest without its table). */
    void uploadTableAndManifest() throws IOException {
        final Manifest m = Manifest.read(dir);
        if (m.table() != null) {
            store.upload(location.bucket(), location.objectKey(m.table().fileName()),
                dir.resolve(m.table().fileName()));
        }
        store.put(location.bucket(), location.objectKey(Manifest.FILE_NAME),
            Files.readAllBytes(dir.resolve(Manifest.FILE_NAME)));
    }

    @Override
    public void close() {
        LauncherTmp.deleteTree(dir);
    }
}
