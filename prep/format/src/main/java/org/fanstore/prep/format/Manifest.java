package org.fanstore.prep.format;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * manifest.txt: what a loader needs before it opens any partition (see README.md). Immutable. The text form
 * carries no timestamps, host names or absolute paths, so equal inputs give byte-identical manifests.
 */
public final class Manifest {
    /** The manifest's file name inside a dataset directory. */
    public static final String FILE_NAME = "manifest.txt";
    private static final String FIRST_LINE = "fanstore-manifest 2";
    /** Datasets prepped before the metadata table existed: readable (to upgrade them), not runnable. */
    private static final String FIRST_LINE_V1 = "fanstore-manifest 1";

    private final byte[] name;
    private final long files;
    private final long dirs;
    private final long symlinks;
    private final long rawBytes;
    private final long storedBytes;
    private final Compression compress;
    private final List<byte[]> broadcastDirs;
    private final List<PartitionInfo> partitions;
    private final TableInfo table;

    /** A manifest without a table record yet (prep writes one, then adds the table with {@link #withTable}). */
    public Manifest(final byte[] name, final long files, final long dirs, final long symlinks, final long rawBytes,
        final long storedBytes, final Compression compress, final List<byte[]> broadcastDirs,
        final List<PartitionInfo> partitions) {
        this(name, files, dirs, symlinks, rawBytes, storedBytes, compress, broadcastDirs, partitions, null);
    }

    private Manifest(final byte[] name, final long files, final long dirs, final long symlinks, final long rawBytes,
        final long storedBytes, final Compression compress, final List<byte[]> broadcastDirs,
        final List<PartitionInfo> partitions, final TableInfo table) {
        this.table = table;
        this.name = name.clone();
        this.files = files;
        this.dirs = dirs;
        this.symlinks = symlinks;
        this.rawBytes = rawBytes;
        this.storedBytes = storedBytes;
        this.compress = compress;
        this.broadcastDirs = List.copyOf(broadcastDirs);
        this.partitions = List.copyOf(partitions);
    }

    /** The dataset's name as text (UTF-8; invalid bytes shown as {@code \xNN}). */
    public String name() {
        return PathBytes.display(name);
    }

    /** The dataset's name as the raw bytes prep recorded. */
    public byte[] nameBytes() {
        return name.clone();
    }

    public long files() {
        return files;
    }

    /** Directories, the root included. */
    public long dirs() {
        return dirs;
    }

    public long symlinks() {
        return symlinks;
    }

    /** Sum of the regular files' sizes. */
    public long rawBytes() {
        return rawBytes;
    }

    /** Sum of the stored body lengths (files and symlink targets). */
    public long storedBytes() {
        return storedBytes;
    }

    public Compression compress() {
        return compress;
    }

    /** The --broadcast directories, relative path bytes without trailing '/'. */
    public List<byte[]> broadcastDirs() {
        return broadcastDirs;
    }

    /** Regular partitions (index order), then broadcast partitions (index order). */
    public List<PartitionInfo> partitions() {
        return partitions;
    }

    /** The regular partitions only. */
    public List<PartitionInfo> regularPartitions() {
        return partitions.stream().filter(p -> !p.broadcast()).toList();
    }

    /** The broadcast partitions only. */
    public List<PartitionInfo> broadcastPartitions() {
        return partitions.stream().filter(PartitionInfo::broadcast).toList();
    }

    /** The metadata table's record; null for a dataset prepped before tables existed (run {@code fanstore upgrade}). */
    public TableInfo table() {
        return table;
    }

    /** This manifest with {@code table} as its table record. */
    public Manifest withTable(final TableInfo table) {
        return new Manifest(name, files, dirs, symlinks, rawBytes, storedBytes, compress, broadcastDirs, partitions,
            table);
    }

    /**
     * The dataset's identity: FNV-1a 64 over its name and its partitions' file names and kinds (its shape, not its
     * contents: those are the partitions' own checks' to guard, and the manifest binds the table by its CRC). The
     * table records it, so a table of another dataset is refused by name even when its manifest line came along.
     */
    public long datasetId() {
        final StringBuilder sb = new StringBuilder(PathBytes.escape(name));
        for (final PartitionInfo p : partitions) {
            sb.append('\n').append(p.fileName()).append(' ').append(p.broadcast() ? 'b' : 'r');
        }
        return org.fanstore.prep.format.table.Fnv1a64.hash(sb.toString().getBytes(StandardCharsets.UTF_8));
    }

    /** The manifest as text, exactly as written to manifest.txt. */
    public String toText() {
        final StringBuilder sb = new StringBuilder(256 + partitions.size() * 64);
        sb.append(table != null ? FIRST_LINE : FIRST_LINE_V1).append('\n');
        sb.append("name ").append(PathBytes.escape(name)).append('\n');
        sb.append("files ").append(files).append('\n');
        sb.append("dirs ").append(dirs).append('\n');
        sb.append("symlinks ").append(symlinks).append('\n');
        sb.append("raw_bytes ").append(rawBytes).append('\n');
        sb.append("stored_bytes ").append(storedBytes).append('\n');
        sb.append("compress ").append(compress.manifestWord()).append('\n');
        sb.append("partitions ").append(regularPartitions().size()).append('\n');
        sb.append("broadcast_partitions ").append(broadcastPartitions().size()).append('\n');
        for (final byte[] dir : broadcastDirs) {
            sb.append("broadcast_dir ").append(PathBytes.escape(dir)).append('\n');
        }
        for (final PartitionInfo p : partitions) {
            sb.append(String.format("partition %d %s %d %08x %d %s\n", p.index(), p.fileName(), p.bytes(),
                p.crc32c(), p.entries(), p.broadcast() ? "broadcast" : "regular"));
        }
        if (table != null) {
            sb.append(String.format("table %s %d %08x\n", table.fileName(), table.bytes(), table.crc32c()));
        }
        return sb.toString();
    }

    /** Writes manifest.txt into {@code datasetDir} (through a temporary file renamed over it) and syncs it. */
    public void write(final Path datasetDir) throws IOException {
        final Path file = datasetDir.resolve(FILE_NAME);
        final Path temporary = datasetDir.resolve(FILE_NAME + ".tmp");
        Files.write(temporary, toText().getBytes(StandardCharsets.US_ASCII));
        try (var channel = java.nio.channels.FileChannel.open(temporary, java.nio.file.StandardOpenOption.WRITE)) {
            channel.force(true);
        }
        Files.move(temporary, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    /** Reads {@code datasetDir/manifest.txt}; a bad record throws {@link BadManifestException} naming the line. */
    public static Manifest read(final Path datasetDir) throws IOException {
        final Path file = datasetDir.resolve(FILE_NAME);
        if (!Files.isRegularFile(file)) {
            throw new BadManifestException(file, 0, "missing: " + datasetDir + " is not a fanstore dataset " +
                "(make one with fanstore prep)");
        }
        return new Parser(file).parse(Files.readAllLines(file, StandardCharsets.ISO_8859_1));
    }

    /** Parses the manifest's lines, remembering which line each value came from for the error message. */
    private static final class Parser {
        private final Path file;
        private int lineNumber;

        Parser(final Path file) {
            this.file = file;
        }

        Manifest parse(final List<String> lines) throws BadManifestException {
            byte[] name = null;
            final long[] counts = {-1, -1, -1, -1, -1, -1, -1};
            final String[] countKeys = {"files", "dirs", "symlinks", "raw_bytes", "stored_bytes", "partitions",
                "broadcast_partitions"};
            Compression compress = null;
            final List<byte[]> broadcastDirs = new ArrayList<>();
            final List<PartitionInfo> regular = new ArrayList<>();
            final List<PartitionInfo> broadcast = new ArrayList<>();
            final Set<String> seen = new HashSet<>();
            TableInfo table = null;
            boolean sawFirst = false;
            boolean v1 = false;
            lineNumber = 0;
            for (final String line : lines) {
                lineNumber++;
                if (line.startsWith("#") || line.isEmpty()) {
                    continue;
                }
                if (!sawFirst) {
                    if (!line.equals(FIRST_LINE) && !line.equals(FIRST_LINE_V1)) {
                        throw bad("expected '" + FIRST_LINE + "', found '" + line + "'");
                    }
                    v1 = line.equals(FIRST_LINE_V1);
                    sawFirst = true;
                    continue;
                }
                final String[] f = line.split(" ", -1);
                final String key = f[0];
                if (!key.equals("partition") && !key.equals("broadcast_dir") && !seen.add(key)) {
                    throw bad("'" + key + "' appears twice");
                }
                switch (key) {
                    case "name" -> name = validName(unescape(field(f, 2)[1]));
                    case "compress" -> {
                        compress = Compression.fromManifestWord(field(f, 2)[1]);
                        if (compress == null) {
                            throw bad("compress must be none, lz4 or lz4hc, found '" + f[1] + "'");
                        }
                    }
                    case "broadcast_dir" -> broadcastDirs.add(unescape(field(f, 2)[1]));
                    case "partition" -> partition(field(f, 7), regular, broadcast);
                    case "table" -> table = table(field(f, 4), v1);
                    default -> {
                        final int k = List.of(countKeys).indexOf(key);
                        if (k < 0) {
                            throw bad("unknown record '" + key + "'");
                        }
                        counts[k] = number(field(f, 2)[1]);
                    }
                }
            }
            lineNumber = 0;
            if (!sawFirst) {
                throw bad("empty file");
            }
            if (!v1 && table == null) {
                throw bad("no 'table' record");
            }
            if (name == null || compress == null) {
                throw bad(name == null ? "no 'name' record" : "no 'compress' record");
            }
            for (int k = 0; k < counts.length; k++) {
                if (counts[k] < 0) {
                    throw bad("no '" + countKeys[k] + "' record");
                }
            }
            if (regular.size() != counts[5] || broadcast.size() != counts[6]) {
                throw bad("lists " + regular.size() + " regular and " + broadcast.size() +
                    " broadcast partition lines, the counts say " + counts[5] + " and " + counts[6]);
            }
            final List<PartitionInfo> all = new ArrayList<>(regular);
            all.addAll(broadcast);
            return new Manifest(name, counts[0], counts[1], counts[2], counts[3], counts[4], compress, broadcastDirs,
                Collections.unmodifiableList(all), table);
        }

        private byte[] validName(final byte[] name) throws BadManifestException {
            final String problem = DatasetNameRule.problem(name);
            if (problem != null) {
                final String shown = name.length == 0 ? "" : PathBytes.display(name);
                throw bad("name '" + shown + "' " + problem + ": a dataset's name is " + DatasetNameRule.RULE +
                    "; run fanstore prep again with such a --name");
            }
            return name;
        }

        private void partition(final String[] f, final List<PartitionInfo> regular,
            final List<PartitionInfo> broadcast) throws BadManifestException {
            final boolean isBroadcast;
            switch (f[6]) {
                case "regular" -> isBroadcast = false;
                case "broadcast" -> isBroadcast = true;
                default -> throw bad("partition kind must be regular or broadcast, found '" + f[6] + "'");
            }
            final List<PartitionInfo> kind = isBroadcast ? broadcast : regular;
            final long index = number(f[1]);
            if (index != kind.size()) {
                throw bad("partition index " + index + " out of order, expected " + kind.size());
            }
            final String expectedName = isBroadcast ? PartitionDescriptor.broadcastFileName((int)index) :
                PartitionDescriptor.regularFileName((int)index);
            if (!f[2].equals(expectedName)) {
                throw bad("partition file name '" + f[2] + "', expected '" + expectedName + "'");
            }
            if (!f[4].matches("[0-9a-f]{8}")) {
                throw bad("CRC32C must be 8 lower-case hex digits, found '" + f[4] + "'");
            }
            kind.add(new PartitionInfo((int)index, f[2], number(f[3]), Integer.parseUnsignedInt(f[4], 16),
                number(f[5]), isBroadcast));
        }

        private TableInfo table(final String[] f, final boolean v1) throws BadManifestException {
            if (v1) {
                throw bad("a 'table' record in a version 1 manifest");
            }
            if (!f[1].equals(TableInfo.FILE_NAME)) {
                throw bad("table file name '" + f[1] + "', expected '" + TableInfo.FILE_NAME + "'");
            }
            if (!f[3].matches("[0-9a-f]{8}")) {
                throw bad("CRC32C must be 8 lower-case hex digits, found '" + f[3] + "'");
            }
            return new TableInfo(f[1], number(f[2]), Integer.parseUnsignedInt(f[3], 16));
        }

        private String[] field(final String[] fields, final int expected) throws BadManifestException {
            if (fields.length != expected) {
                throw bad("'" + fields[0] + "' takes " + (expected - 1) + " value(s), found " + (fields.length - 1));
            }
            return fields;
        }

        private long number(final String text) throws BadManifestException {
            try {
                final long value = Long.parseLong(text);
                if (value >= 0 && !text.startsWith("+")) {
                    return value;
                }
            } catch (final NumberFormatException ignored) {
                // reported below
            }
            throw bad("expected a non-negative number, found '" + text + "'");
        }

        private byte[] unescape(final String text) throws BadManifestException {
            try {
                return PathBytes.unescape(text);
            } catch (final IllegalArgumentException e) {
                throw bad(e.getMessage());
            }
        }

        private BadManifestException bad(final String problem) {
            return new BadManifestException(file, lineNumber, problem);
        }
    }
}
