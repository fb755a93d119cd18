package org.fanstore.launcher;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

import org.fanstore.prep.format.FileModes;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;

/** How the inspection commands print an entry's fields (ls -l columns, stat lines). */
final class EntryFormat {
    private static final DateTimeFormatter LS_TIME =
        DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(ZoneOffset.UTC);

    private EntryFormat() {
    }

    /** "drwxr-xr-x" style, from st_mode. */
    static String modeString(final int mode) {
        final StringBuilder sb = new StringBuilder(10);
        sb.append(switch (FileModes.type(mode)) {
            case FileModes.S_IFDIR -> 'd';
            case FileModes.S_IFLNK -> 'l';
            default -> '-';
        });
        final String rwx = "rwxrwxrwx";
        for (int bit = 8; bit >= 0; bit--) {
            sb.append((mode & (1 << bit)) != 0 ? rwx.charAt(8 - bit) : '-');
        }
        return sb.toString();
    }

    static String typeName(final PartitionEntry e) {
        return e.isDir() ? "directory" : e.isSymlink() ? "symlink" : "file";
    }

    static String codecName(final PartitionEntry e) {
        return e.codec() == PartitionDescriptor.CODEC_RAW ? "raw" : "lz4-chunked";
    }

    /** ls -l columns before the name: mode, uid, gid, size, mtime (UTC). */
    static String longColumns(final PartitionEntry e) {
        return String.format("%s %5d %5d %12d %s ", modeString(e.mode()), e.uid(), e.gid(), e.rawLength(),
            LS_TIME.format(Instant.ofEpochSecond(e.mtimeSec(), e.mtimeNsec())));
    }

    static String isoTime(final PartitionEntry e) {
        return Instant.ofEpochSecond(e.mtimeSec(), e.mtimeNsec()).toString();
    }
}
