package org.fanstore.prep;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.function.Consumer;

import org.fanstore.prep.format.DatasetPaths;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PathBytes;

/**
 * Finds what prep packs: every directory, regular file and symlink under the input root (or those named by a
 * --file-list, with their parent directories), keyed by dataset path bytes in unsigned byte order. Never
 * follows a symlink; refuses one whose target leaves the dataset; skips sockets, FIFOs and devices with a
 * warning; refuses unreadable files and directories unless told to skip them.
 */
final class SourceTreeWalker
{
    private static final String ATTRIBUTES = "unix:mode,uid,gid,size,lastModifiedTime";
    private static final int S_IFMT = 0170000;
    private static final int S_IFREG = 0100000;
    private static final int S_IFDIR = 0040000;
    private static final int S_IFLNK = 0120000;

    private final Path root;
    private final byte[] rootBytes;
    private final boolean skipUnreadable;
    private final Consumer<String> warnings;
    private final NavigableMap<byte[], SourceEntry> found = new TreeMap<>(Arrays::compareUnsigned);

    SourceTreeWalker(final Path root, final boolean skipUnreadable, final Consumer<String> warnings)
    {
        this.root = root;
        this.rootBytes = NativePaths.bytesOf(root);
        this.skipUnreadable = skipUnreadable;
        this.warnings = warnings;
    }

    /** Walks the whole tree. */
    NavigableMap<byte[], SourceEntry> walkAll() throws IOException, PrepException
    {
        final SourceEntry top = stat(new byte[0], root, true);
        found.put(top.path(), top);
        walkBelow(top);
        return found;
    }

    /** Packs only the paths listed in {@code listFile} (one per line; a listed directory brings its subtree). */
    NavigableMap<byte[], SourceEntry> walkList(final Path listFile) throws IOException, PrepException
    {
        final SourceEntry top = stat(new byte[0], root, true);
        found.put(top.path(), top);
        final byte[] list = Files.readAllBytes(listFile);
        int lineNumber = 0;
        int start = 0;
        for (int i = 0; i <= list.length; i++)
        {
            if (i < list.length && list[i] != '\n')
            {
                continue;
            }
            lineNumber++;
            final byte[] line = Arrays.copyOfRange(list, start, i);
            start = i + 1;
            if (line.length > 0)
            {
                addListed(listFile, lineNumber, line);
            }
        }
        return found;
    }

    private void addListed(final Path listFile, final int lineNumber, final byte[] line)
        throws IOException, PrepException
    {
        byte[] relative = line;
        if (line[0] == '/')
        {
            final byte[] prefix = Arrays.copyOf(rootBytes, rootBytes.length + 1);
            prefix[rootBytes.length] = '/';
            if (line.length < prefix.length || Arrays.compare(line, 0, prefix.length, prefix, 0, prefix.length) != 0)
            {
                throw new PrepException(listFile + ":" + lineNumber + ": " + PathBytes.display(line) +
                    " is not inside --input " + root + ": list paths relative to it or absolute inside it");
            }
            relative = Arrays.copyOfRange(line, prefix.length, line.length);
        }
        final byte[] normalized = DatasetPaths.normalizeRelative(relative);
        if (normalized == null)
        {
            throw new PrepException(listFile + ":" + lineNumber + ": " + PathBytes.display(line) +
                " uses '..': list paths inside --input " + root);
        }
        if (normalized.length == 0 || found.containsKey(normalized))
        {
            return;
        }
        byte[] ancestor = PathBytes.parent(normalized);
        while (ancestor.length > 0 && !found.containsKey(ancestor))
        {
            final SourceEntry dir = stat(ancestor, absolute(ancestor), false);
            found.put(ancestor, dir);
            ancestor = PathBytes.parent(ancestor);
        }
        final SourceEntry entry;
        try
        {
            entry = stat(normalized, absolute(normalized), false);
        }
        catch (final NoSuchFileException e)
        {
            throw new PrepException(listFile + ":" + lineNumber + ": " + absolute(normalized) +
                " does not exist: fix the list or the input");
        }
        if (entry != null)
        {
            found.put(normalized, entry);
            if (entry.isDir())
            {
                walkBelow(entry);
            }
        }
    }

    private Path absolute(final byte[] relative)
    {
        return NativePaths.pathOf(PathBytes.child(rootBytes, relative));
    }

    private void walkBelow(final SourceEntry top) throws IOException, PrepException
    {
        final Deque<SourceEntry> pending = new ArrayDeque<>();
        pending.push(top);
        while (!pending.isEmpty())
        {
            final SourceEntry dir = pending.pop();
            try (DirectoryStream<Path> children = Files.newDirectoryStream(dir.source()))
            {
                for (final Path child : children)
                {
                    final byte[] path = PathBytes.child(dir.path(), NativePaths.bytesOf(child.getFileName()));
                    final SourceEntry entry = stat(path, child, false);
                    if (entry == null || found.putIfAbsent(path, entry) != null)
                    {
                        continue;
                    }
                    if (entry.isDir())
                    {
                        pending.push(entry);
                    }
                }
            }
            catch (final AccessDeniedException e)
            {
                unreadable(dir.source(), "directory");
            }
        }
    }

    /** lstat of one path; null when it is skipped (special file, or unreadable with --skip-unreadable). */
    private SourceEntry stat(final byte[] path, final Path source, final boolean followLinks)
        throws IOException, PrepException
    {
        final Map<String, Object> a = followLinks ? Files.readAttributes(source, ATTRIBUTES) :
            Files.readAttributes(source, ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
        final int mode = (Integer)a.get("mode");
        final Instant mtime = ((FileTime)a.get("lastModifiedTime")).toInstant();
        final int kind = mode & S_IFMT;
        final int type;
        long size = (Long)a.get("size");
        byte[] target = null;
        switch (kind)
        {
            case S_IFREG ->
            {
                type = PartitionDescriptor.TYPE_FILE;
                if (!Files.isReadable(source))
                {
                    unreadable(source, "file");
                    return null;
                }
            }
            case S_IFDIR -> type = PartitionDescriptor.TYPE_DIRECTORY;
            case S_IFLNK ->
            {
                type = PartitionDescriptor.TYPE_SYMLINK;
                target = NativePaths.bytesOf(Files.readSymbolicLink(source));
                if (DatasetPaths.resolveLink(PathBytes.parent(path), target) == null)
                {
                    throw new PrepException("symlink " + source + " points outside the input (target " +
                        new String(target, StandardCharsets.UTF_8) + "): fanstore never follows links out of " +
                        "the dataset; replace it with a relative link inside " + root + " or with a copy");
                }
                size = target.length;
            }
            default ->
            {
                warnings.accept("skipping " + kindName(kind) + " " + source +
                    " (only regular files, directories and symlinks are packed)");
                return null;
            }
        }
        if (type == PartitionDescriptor.TYPE_DIRECTORY)
        {
            size = 0;
        }
        return new SourceEntry(path, source, type, mode, (Integer)a.get("uid"), (Integer)a.get("gid"),
            mtime.getEpochSecond(), mtime.getNano(), size, target);
    }

    private void unreadable(final Path source, final String what) throws PrepException
    {
        if (!skipUnreadable)
        {
            throw new PrepException("cannot read " + what + " " + source + ": fix its permissions or pass " +
                "--skip-unreadable to leave it out");
        }
        warnings.accept("skipping unreadable " + what + " " + source);
    }

    private static String kindName(final int kind)
    {
        return switch (kind)
        {
            case 0010000 -> "FIFO";
            case 0140000 -> "socket";
            case 0020000 -> "character device";
            case 0060000 -> "block device";
            default -> "special file";
        };
    }
}
