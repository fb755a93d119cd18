package org.fanstore.prep.format;

import java.io.IOException;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A whole dataset directory (manifest + every partition) opened for inspection: look a path up, list a
 * directory, read a file. Opening validates every partition; the namespace is indexed in memory.
 */
public final class Dataset implements AutoCloseable {
    private static final int MAX_SYMLINK_HOPS = 40;

    private final Path dir;
    private final Manifest manifest;
    private final List<PartitionReader> readers;
    private final Map<Key, Located> byPath = new HashMap<>();
    private final Map<Key, List<PartitionEntry>> children = new HashMap<>();

    /** An entry and the partition holding it. */
    public record Located(PartitionEntry entry, PartitionReader partition) {
    }

    private record Key(byte[] bytes) {
        @Override
        public boolean equals(final Object o) {
            return o instanceof Key k && Arrays.equals(bytes, k.bytes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(bytes);
        }
    }

    private Dataset(final Path dir, final Manifest manifest, final List<PartitionReader> readers) throws IOException {
        this.dir = dir;
        this.manifest = manifest;
        this.readers = readers;
        for (final PartitionReader reader : readers) {
            for (final PartitionEntry e : reader.entries()) {
                final Located previous = byPath.put(new Key(e.path()), new Located(e, reader));
                if (previous != null) {
                    throw new CorruptPartitionException(reader.file(), e.path(), "also stored in " +
                        previous.partition().file().getFileName());
                }
                if (e.path().length > 0) {
                    children.computeIfAbsent(new Key(PathBytes.parent(e.path())), k -> new ArrayList<>()).add(e);
                }
            }
        }
        for (final List<PartitionEntry> list : children.values()) {
            list.sort(Comparator.comparing(PartitionEntry::path, Arrays::compareUnsigned));
        }
    }

    /** Opens {@code dir} (an {@code OUT.fs} directory). */
    public static Dataset open(final Path dir) throws IOException {
        final Manifest manifest = Manifest.read(dir);
        final List<PartitionReader> readers = new ArrayList<>();
        try {
            for (final PartitionInfo p : manifest.partitions()) {
                readers.add(PartitionReader.open(dir.resolve(p.fileName())));
            }
            return new Dataset(dir, manifest, List.copyOf(readers));
        } catch (final IOException | RuntimeException e) {
            for (final PartitionReader r : readers) {
                r.close();
            }
            throw e;
        }
    }

    public Path dir() {
        return dir;
    }

    public Manifest manifest() {
        return manifest;
    }

    /** The entry at {@code path} (no symlink following). */
    public Optional<Located> lookup(final byte[] path) {
        return Optional.ofNullable(byPath.get(new Key(path)));
    }

    /**
     * The entry at {@code path} after following symlinks (lexically, inside the dataset only); empty when the
     * path or a link target does not exist, escapes the dataset or loops.
     */
    public Optional<Located> resolve(final byte[] path) {
        byte[] current = path;
        for (int hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
            final Located found = byPath.get(new Key(current));
            if (found == null || !found.entry().isSymlink()) {
                return Optional.ofNullable(found);
            }
            try {
                current = DatasetPaths.resolveLink(PathBytes.parent(current), found.partition().readRaw(found.entry()));
            } catch (final IOException e) {
                return Optional.empty();
            }
            if (current == null) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** The entries directly inside directory {@code dir}, sorted by name bytes (empty if none). */
    public List<PartitionEntry> list(final byte[] dirPath) {
        return children.getOrDefault(new Key(dirPath), List.of());
    }

    /** Every entry in every partition, partition by partition. */
    public List<Located> all() {
        final List<Located> out = new ArrayList<>(byPath.size());
        for (final PartitionReader r : readers) {
            for (final PartitionEntry e : r.entries()) {
                out.add(new Located(e, r));
            }
        }
        return out;
    }

    /** A file's raw bytes (decompressed, CRC-checked). */
    public byte[] read(final Located located) throws IOException {
        return located.partition().readRaw(located.entry());
    }

    /** Streams a file's raw bytes to {@code out} (CRC-checked at the end). */
    public void copy(final Located located, final WritableByteChannel out) throws IOException {
        located.partition().copyRaw(located.entry(), out);
    }

    @Override
    public void close() throws IOException {
        for (final PartitionReader r : readers) {
            r.close();
        }
    }
}
