package org.fanstore.runtime.metadata;

import static org.fanstore.prep.format.FileModes.S_IFDIR;
import static org.fanstore.prep.format.FileModes.S_IFLNK;
import static org.fanstore.prep.format.FileModes.S_IFMT;
import static org.fanstore.prep.format.FileModes.S_IFREG;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.*;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Map;

import org.fanstore.prep.format.PathBytes;
import org.fanstore.prep.format.table.LandedTable;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.prep.format.table.MetadataTableWriter;
import org.fanstore.prep.format.table.NamespaceEntry;

/**
 * {@code TableFromTree <dir> <name> <out.tbl>}: writes a metadata table describing a real directory tree, so the
 * shim can be tried on real programs with no runtime. Every key is {@code <name>/<path below dir>}; regular files
 * are local raw on rank 0 of a world of 1, symlinks keep their targets, other file types are skipped.
 * The local root is the directory holding {@code <dir>}, so {@code <local root>/<key>} is the real file: hence
 * {@code <dir>} must be named {@code <name>}. To publish a tree under another name, make a symlink
 * {@code ln -s <dir> <elsewhere>/<name>} and pass that (the walk follows that one top-level link only).
 *
 * <p>Names are taken byte-exact, non-UTF-8 ones included: Java decodes file names to Strings lossily, but
 * {@link Path#toUri()} percent-escapes the raw bytes of a Unix path, which this tool decodes back. Two known
 * losses: a symlink target's trailing '/' is dropped, and the {@code <dir>} argument itself must be decodable
 * in the JVM's file-name charset (names below it may be anything).
 */
public final class TableFromTree {
    private static final String LSTAT_ATTRIBUTES = "unix:mode,uid,gid,size,lastModifiedTime,dev";

    private TableFromTree() {
    }

    public static void main(final String[] args) throws IOException {
        if (args.length != 3) {
            System.err.println("usage: TableFromTree <dir> <name> <out.tbl>");
            System.exit(2);
        }
        final Path dir = Path.of(args[0]).toAbsolutePath().normalize();
        final Path out = Path.of(args[2]);
        try {
            final long bytes = write(dir, args[1], out);
            System.out.println("wrote " + bytes + " bytes to " + out + " (local root " + dir.getParent() + ")");
        } catch (final IllegalArgumentException ex) {
            System.err.println("TableFromTree: " + ex.getMessage());
            System.exit(1);
        }
    }

    /** Walks {@code dir} (absolute) and writes the table to {@code out}; returns bytes written. */
    public static long write(final Path dir, final String name, final Path out) throws IOException {
        final Path fileName = dir.getFileName();
        if (fileName == null || !fileName.toString().equals(name) || name.contains("/")) {
            throw new IllegalArgumentException(dir + " must be named " + name + " so that <local root>/<key> is " +
                "the real file: ln -s " + dir + " <elsewhere>/" + name + " and pass that");
        }
        final byte[] localRoot = rawBytes(dir.getParent());
        final Path realDir = dir.toRealPath();
        final byte[] realPrefix = rawBytes(realDir);
        final Map<String, Object> top = Files.readAttributes(realDir, LSTAT_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
        final byte[] nameKey = name.getBytes(PathBytes.fileNameCharset());

        final List<NamespaceEntry> entries = new ArrayList<>();
        entries.add(entry(nameKey, top, 0, NO_PARTITION, null));
        final Deque<Path> pending = new ArrayDeque<>();
        pending.push(realDir);
        while (!pending.isEmpty()) {
            try (DirectoryStream<Path> children = Files.newDirectoryStream(pending.pop())) {
                for (final Path child : children) {
                    final byte[] key = keyOf(nameKey, realPrefix, rawBytes(child));
                    final Map<String, Object> st =
                        Files.readAttributes(child, LSTAT_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
                    final int type = (int)st.get("mode") & S_IFMT;
                    if (type == S_IFDIR) {
                        entries.add(entry(key, st, 0, NO_PARTITION, null));
                        pending.push(child);
                    } else if (type == S_IFREG) {
                        entries.add(entry(key, st, FLAG_UNPACKABLE, 0, null));
                    } else if (type == S_IFLNK) {
                        entries.add(entry(key, st, 0, NO_PARTITION, linkTargetBytes(Files.readSymbolicLink(child))));
                    } else {
                        System.err.println("TableFromTree: skipping " + child
                            + " (neither file, directory nor symlink)");
                    }
                }
            }
        }
        final int stDev = (int)(long)(Long)top.get("dev");
        // Every file lies in "partition 0", held by rank 0 of a world of one: each is local raw, read in place.
        final Path dataset = out.resolveSibling(out.getFileName() + ".dataset");
        try {
            MetadataTableWriter.write(dataset, entries, 0, 1, 0, stDev);
            final int crc;
            try (MetadataTable table = MetadataTable.openDataset(dataset)) {
                crc = table.recordedCrc();
            }
            LandedTable.copy(dataset, out, crc, 0, 1, 0, localRoot, System.currentTimeMillis());
        } finally {
            Files.deleteIfExists(dataset);
        }
        return Files.size(out);
    }

    private static NamespaceEntry entry(
        final byte[] key, final Map<String, Object> st, final int flags, final int partition, final byte[] target) {
        final Instant mtime = ((FileTime)st.get("lastModifiedTime")).toInstant();
        return new NamespaceEntry(key, (int)st.get("mode"), (long)st.get("size"), mtime.getEpochSecond(),
            mtime.getNano(), (int)st.get("uid"), (int)st.get("gid"), flags, partition, target, 0, 0, 0, 0);
    }

    /** {@code <name>/<path below the walk root>} from the raw bytes of the walk root and of a path below it. */
    private static byte[] keyOf(final byte[] name, final byte[] rootBytes, final byte[] pathBytes) {
        final int below = rootBytes.length + (rootBytes[rootBytes.length - 1] == '/' ? 0 : 1);
        final byte[] key = Arrays.copyOf(name, name.length + 1 + pathBytes.length - below);
        key[name.length] = '/';
        System.arraycopy(pathBytes, below, key, name.length + 1, pathBytes.length - below);
        return key;
    }

    private static byte[] linkTargetBytes(final Path target) {
        if (target.isAbsolute()) {
            return rawBytes(target);
        }
        final byte[] rooted = rawBytes(Path.of("/").resolve(target));
        return Arrays.copyOfRange(rooted, 1, rooted.length);
    }

    /**
     * The exact bytes of an absolute path. {@code toUri()} writes "file://" then every byte of the path,
     * percent-escaping any outside the URI path characters, and adds a '/' when the path is a directory.
     */
    static byte[] rawBytes(final Path absolute) {
        final byte[] bytes = PathBytes.percentDecode(absolute.toUri().getRawPath());
        final int n = bytes.length > 1 && bytes[bytes.length - 1] == '/' ? bytes.length - 1 : bytes.length;
        return Arrays.copyOf(bytes, n);
    }
}
