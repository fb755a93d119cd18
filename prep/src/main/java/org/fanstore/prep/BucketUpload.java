package org.fanstore.prep;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.TableInfo;
import org.fanstore.prep.store.DatasetLocation;
import org.fanstore.prep.store.ObjectStore;

/**
 * Puts a packed dataset directory into a bucket (README.md, "Into a bucket"): the old manifest object deleted
 * first, the partitions (skipping those already there with the same size and CRC32C), the table, the manifest
 * last, so a reader never finds a manifest whose objects are not all there.
 */
public final class BucketUpload {
    /** User metadata on each partition object: the whole-file CRC32C the manifest records (8 hex digits). */
    public static final String CRC_METADATA = "fanstore-crc32c";
    /** The store's upload part: the progress bar counts parts (approximately, for a single-PUT partition). */
    private static final long UPLOAD_UNIT = org.fanstore.prep.store.StoreTiming.UPLOAD_PART_BYTES;

    /** What an upload did. */
    public record Uploaded(int partitions, int skipped, long bytes) {
    }

    private BucketUpload() {
    }

    /** Uploads {@code dir} (a finished local dataset) to {@code target}, telling {@code progress} part by part. */
    public static Uploaded upload(final ObjectStore store, final Path dir, final DatasetLocation target,
        final PrepProgress progress) throws IOException {
        final Manifest manifest = Manifest.read(dir);
        final String bucket = target.bucket();
        store.delete(bucket, target.objectKey(Manifest.FILE_NAME));
        final List<Path> others = new ArrayList<>();
        long total = 0;
        long units = 0;
        for (final PartitionInfo p : manifest.partitions()) {
            total += p.bytes();
            units += Math.max(1, (p.bytes() + UPLOAD_UNIT - 1) / UPLOAD_UNIT);
        }
        final TableInfo table = manifest.table();
        if (table != null) {
            others.add(dir.resolve(table.fileName()));
        }
        int skipped = 0;
        long sent = 0;
        progress.start(units, total);
        try {
            for (final PartitionInfo p : manifest.partitions()) {
                final String key = target.objectKey(p.fileName());
                final String crc = String.format(Locale.ROOT, "%08x", p.crc32c());
                final Optional<ObjectStore.Head> there = store.head(bucket, key);
                if (there.isPresent() && there.get().size() == p.bytes() &&
                    crc.equals(there.get().metadata().get(CRC_METADATA))) {
                    skipped++;
                    progress.advance(p.bytes());
                    continue;
                }
                store.upload(bucket, key, dir.resolve(p.fileName()), Map.of(CRC_METADATA, crc), bytes -> {
                    synchronized (progress) {
                        progress.advance(bytes);
                    }
                });
                sent += p.bytes();
            }
            for (final Path file : others) {
                store.upload(bucket, target.objectKey(file.getFileName().toString()), file);
                sent += Files.size(file);
            }
            final byte[] text = Files.readAllBytes(dir.resolve(Manifest.FILE_NAME));
            store.put(bucket, target.objectKey(Manifest.FILE_NAME), text);
        } finally {
            progress.close();
        }
        return new Uploaded(manifest.partitions().size(), skipped, sent);
    }
}
