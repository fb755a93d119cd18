package org.fanstore.runtime.output;

import static org.fanstore.prep.format.FileModes.S_IFDIR;
import static org.fanstore.prep.format.FileModes.S_IFLNK;
import static org.fanstore.prep.format.FileModes.S_IFREG;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.fanstore.prep.format.FileModes;

/** What a drain pass sees of this rank's upper directory: lstat of each entry, symlinks not followed. */
final class UpperScan {
    private static final LinkOption[] NOFOLLOW = {LinkOption.NOFOLLOW_LINKS};
    private static final String ATTRIBUTES = "unix:ino,mode,size,lastModifiedTime";

    private UpperScan() {
    }

    /**
     * The upper tree, symlinks not followed; entries that vanish while it is walked are left out. Directories are
     * listed with O_NOATIME ({@link NoAtime}): the job's directories keep the atime the job gave them.
     */
    static TreeMap<String, Entry> scan(Path upper) throws IOException {
        TreeMap<String, Entry> seen = new TreeMap<>();
        if (!Files.isDirectory(upper, NOFOLLOW)) {
            return seen;
        }
        Deque<Path> pending = new ArrayDeque<>(List.of(upper));
        while (!pending.isEmpty()) {
            Path d = pending.pop();
            List<String> names;
            try {
                names = NoAtime.list(d);
            } catch (IOException e) {
                seen.remove(upper.relativize(d).toString());  // vanished meanwhile: the next pass sees it
                continue;
            }
            for (String name : names) {
                Path p = d.resolve(name);
                Entry s = stat(p);
                if (s != null) {
                    seen.put(upper.relativize(p).toString(), s);
                    if (s.kind() == Kind.DIR) {
                        pending.push(p);
                    }
                }
            }
        }
        return seen;
    }

    /** lstat of {@code p}, or null when it is gone. */
    private static Entry stat(Path p) {
        try {
            Map<String, Object> a = Files.readAttributes(p, ATTRIBUTES, NOFOLLOW);
            int mode = (Integer) a.get("mode");
            Kind kind = switch (FileModes.type(mode)) {
                case S_IFREG -> Kind.FILE;
                case S_IFDIR -> Kind.DIR;
                case S_IFLNK -> Kind.LINK;
                default -> Kind.OTHER;
            };
            if (kind == Kind.DIR || kind == Kind.OTHER) {
                return new Entry(kind, 0, 0, 0, mode, null);
            }
            if (kind == Kind.LINK) {
                return new Entry(kind, 0, 0, 0, mode, Files.readSymbolicLink(p).toString());
            }
            return new Entry(kind, (Long) a.get("ino"), (Long) a.get("size"),
                    OutputService.nanos((FileTime) a.get("lastModifiedTime")), mode, null);
        } catch (IOException e) {
            return null;
        }
    }

    /** Whether the source is no longer what the pass saw. */
    static boolean changed(Path source, Entry s) {
        Entry now = stat(source);
        return now == null || !now.sameBytes(s);
    }

    /**
     * A file, directory or symlink seen in the upper tree, or one this rank put in the output directory (ino, size,
     * mtime: 0 for a directory or a symlink).
     */
    record Entry(Kind kind, long ino, long size, long mtime, int mode, String linkTarget) {
        boolean sameBytes(Entry o) {
            return kind == o.kind && ino == o.ino && size == o.size && mtime == o.mtime
                    && java.util.Objects.equals(linkTarget, o.linkTarget);
        }

        Identity identity() {
            return new Identity(ino, size, mtime);
        }
    }

    enum Kind { FILE, LINK, DIR, OTHER }

    /** A file's identity for rename detection. */
    record Identity(long ino, long size, long mtime) {
    }
}
