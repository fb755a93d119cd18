package org.fanstore.prep.format;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * Checks a whole dataset offline: each partition's size and whole-file CRC32C against the manifest, its header
 * and table, every body's CRC32C, the manifest's totals and the metadata table (TableVerifier). It does not stop
 * at the first fault: the report names every bad partition and every bad file.
 */
public final class DatasetVerifier {
    /** One problem: the partition file (null for dataset-wide faults), the entry path (may be null), what. */
    public record Fault(String partition, String path, String problem) {
        @Override
        public String toString() {
            return (partition == null ? "" : partition + ": ") + (path == null ? "" : path + ": ") + problem;
        }
    }

    /** What was checked and what was wrong. */
    public record Report(List<Fault> faults, int partitions, long files, long rawBytes) {
        public boolean ok() {
            return faults.isEmpty();
        }
    }


    private final List<Fault> faults = new ArrayList<>();
    private final Set<String> seenPaths = new HashSet<>();
    private long files;
    private long dirs;
    private long symlinks;
    private long rawBytes;
    private long storedBytes;

    private DatasetVerifier() {
    }

    /** Called around each partition's check: a copy of a remote dataset fills it before and frees it after. */
    public interface PartitionHook {
        void before(PartitionInfo partition) throws IOException;

        void after(PartitionInfo partition) throws IOException;
    }

    /** Verifies {@code dir}; a missing or bad manifest is an exception, everything else goes in the report. */
    public static Report verify(final Path dir) throws IOException {
        return verify(dir, null);
    }

    /** As {@link #verify(Path)}, with {@code hook} (may be null) called around each partition. */
    public static Report verify(final Path dir, final PartitionHook hook) throws IOException {
        final Manifest manifest = Manifest.read(dir);
        final DatasetVerifier v = new DatasetVerifier();
        for (final PartitionInfo p : manifest.partitions()) {
            if (hook != null) {
                hook.before(p);
            }
            try {
                v.checkPartition(dir, p);
            } finally {
                if (hook != null) {
                    hook.after(p);
                }
            }
        }
        v.checkTotals(manifest);
        org.fanstore.prep.format.table.TableVerifier.check(dir, manifest,
            (path, problem) -> v.faults.add(new Fault(TableInfo.FILE_NAME, path, problem)));
        return new Report(List.copyOf(v.faults), manifest.partitions().size(), v.files, v.rawBytes);
    }

    private void checkPartition(final Path dir, final PartitionInfo info) throws IOException {
        final Path file = dir.resolve(info.fileName());
        final String name = info.fileName();
        final String notRegular = PartitionFiles.notRegular(file);   // before any open: a FIFO would block it
        if (notRegular != null) {
            faults.add(new Fault(name, null, notRegular));
            return;
        }
        final long size;
        try {
            size = Files.size(file);
        } catch (final NoSuchFileException e) {
            faults.add(new Fault(name, null, "missing (the manifest lists it)"));
            return;
        }
        if (size != info.bytes()) {
            faults.add(new Fault(name, null, size + " bytes, the manifest says " + info.bytes() +
                (size < info.bytes() ? " (truncated)" : "")));
        }
        final int crc = wholeFileCrc(file, size);
        if (crc != info.crc32c()) {
            faults.add(new Fault(name, null, String.format("whole-file CRC32C is %08x, the manifest says %08x",
                crc, info.crc32c())));
        }
        try (PartitionReader reader = PartitionReader.open(file)) {
            if (reader.index() != info.index() || reader.isBroadcast() != info.broadcast()) {
                faults.add(new Fault(name, null, "header says partition " + reader.index() +
                    (reader.isBroadcast() ? " (broadcast)" : " (regular)") + ", the manifest disagrees"));
            }
            if (reader.entries().size() != info.entries()) {
                faults.add(new Fault(name, null, reader.entries().size() + " entries, the manifest says " +
                    info.entries()));
            }
            for (final PartitionEntry e : reader.entries()) {
                checkEntry(name, reader, e);
            }
        } catch (final CorruptPartitionException e) {
            faults.add(new Fault(name, e.entryPath() == null ? null : PathBytes.display(e.entryPath()),
                problemOf(e)));
        }
    }

    private void checkEntry(final String partition, final PartitionReader reader, final PartitionEntry e)
        throws IOException {
        if (!cleanPath(e.path())) {
            faults.add(new Fault(partition, e.pathString(), "not a clean relative path (NUL byte, empty, '.' or " +
                "'..' component): prep never writes one"));
        }
        if (!seenPaths.add(PathBytes.escape(e.path()))) {
            faults.add(new Fault(partition, e.pathString(), "stored more than once in the dataset"));
        }
        if (e.isDir()) {
            dirs++;
            return;
        }
        if (e.isFile()) {
            files++;
            rawBytes += e.rawLength();
        } else {
            symlinks++;
        }
        storedBytes += e.storedLength();
        try {
            reader.copyRaw(e, DiscardChannel.INSTANCE);
        } catch (final CorruptPartitionException bad) {
            faults.add(new Fault(partition, e.pathString(), problemOf(bad)));
            return;
        }
        if (e.isSymlink()) {
            checkLink(partition, reader, e);
        }
    }

    /** prep never stores a link that leaves the dataset; one that does was planted after prep. */
    private void checkLink(final String partition, final PartitionReader reader, final PartitionEntry e)
        throws IOException {
        final byte[] path = e.path();
        int slash = path.length;
        while (slash > 0 && path[slash - 1] != '/') {
            slash--;
        }
        final byte[] dir = Arrays.copyOf(path, Math.max(0, slash - 1));
        final byte[] target = reader.readRaw(e);
        if (DatasetPaths.resolveLink(dir, target) == null) {
            faults.add(new Fault(partition, e.pathString(), "symlink target '" + PathBytes.display(target) +
                "' leads outside the dataset"));
        }
    }

    /** The format's path rule: relative, '/'-separated, no empty, "." or ".." component, no NUL ("" is the root). */
    private static boolean cleanPath(final byte[] path) {
        if (path.length == 0) {
            return true;
        }
        int start = 0;
        for (int i = 0; i <= path.length; i++) {
            if (i < path.length && path[i] == 0) {
                return false;
            }
            if (i == path.length || path[i] == '/') {
                final int n = i - start;
                final boolean dots = n <= 2 && path[start] == '.' && (n == 1 || path[start + 1] == '.');
                if (n == 0 || dots) {
                    return false;
                }
                start = i + 1;
            }
        }
        return true;
    }

    private void checkTotals(final Manifest m) {
        final long[] actual = {files, dirs, symlinks, rawBytes, storedBytes};
        final long[] claimed = {m.files(), m.dirs(), m.symlinks(), m.rawBytes(), m.storedBytes()};
        final String[] names = {"files", "dirs", "symlinks", "raw_bytes", "stored_bytes"};
        if (!faults.isEmpty()) {
            return;
        }
        for (int i = 0; i < names.length; i++) {
            if (actual[i] != claimed[i]) {
                faults.add(new Fault(null, null, "manifest says " + names[i] + " " + claimed[i] +
                    ", the partitions hold " + actual[i]));
            }
        }
        if (!Arrays.equals(actual, claimed)) {
            return;
        }
        if (!seenPaths.contains("")) {
            faults.add(new Fault(null, null, "no root directory entry"));
        }
    }

    private static String problemOf(final CorruptPartitionException e) {
        final String message = e.getMessage();
        final String prefix = e.file() + ": " + (e.entryPath() == null ? "" : PathBytes.display(e.entryPath()) +
            ": ");
        return message.startsWith(prefix) ? message.substring(prefix.length()) : message;
    }

    /** At most {@code size} bytes (the size stat gave): a file that grows while read is not followed. */
    private static int wholeFileCrc(final Path file, final long size) throws IOException {
        final CRC32C crc = new CRC32C();
        final ByteBuffer buffer = ByteBuffer.allocateDirect(1 << 20);
        long done = 0;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            while (done < size) {
                buffer.limit((int)Math.min(buffer.capacity(), size - done));
                if (channel.read(buffer) < 0) {
                    break;
                }
                done += buffer.position();
                buffer.flip();
                crc.update(buffer);
                buffer.clear();
            }
        }
        return (int)crc.getValue();
    }
}
