package org.fanstore.prep.format.table;

import static org.fanstore.prep.format.FileModes.S_IFDIR;
import static org.fanstore.prep.format.FileModes.isDirectory;
import static org.fanstore.prep.format.FileModes.isSymlink;
import static org.fanstore.prep.format.table.MetadataTableDescriptor.*;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;

/**
 * What a table written from a namespace must say, derived the simple way (a sorted map, prefix scans) rather
 * than the writer's way, so the vectors check the writer instead of echoing it.
 */
final class NamespaceModel {
    record Row(byte[] key, int mode, long size, long sec, int nsec, int uid, int gid, int flags, int partition,
        byte[] target, boolean added) {
    }

    private final List<Row> rows;

    NamespaceModel(final List<NamespaceEntry> given) {
        final TreeMap<byte[], Row> sorted = new TreeMap<>(Arrays::compareUnsigned);
        for (final NamespaceEntry e : given) {
            final long size = isDirectory(e.mode()) ? DIRECTORY_SIZE :
                isSymlink(e.mode()) ? e.linkTarget().length : e.size();
            sorted.put(e.key(), new Row(e.key(), e.mode(), size, e.mtimeSec(), e.mtimeNsec(), e.uid(), e.gid(),
                e.flags(), e.partition(), e.linkTarget(), false));
        }
        for (final NamespaceEntry e : given) {
            byte[] key = e.key();
            while (key.length > 0) {
                key = parentKey(key);
                sorted.putIfAbsent(key, new Row(key, S_IFDIR | 0755, DIRECTORY_SIZE, 0, 0, 0, 0, 0, NO_PARTITION,
                    null, true));
            }
        }
        rows = new ArrayList<>(sorted.values());
        // Added directories take mtime/uid/gid from their newest child; deepest first so added children are settled.
        for (int i = rows.size() - 1; i >= 0; i--) {
            final Row dir = rows.get(i);
            if (!dir.added()) {
                continue;
            }
            Row newest = null;
            for (final int c : children(i)) {
                final Row child = rows.get(c);
                if (newest == null || child.sec() > newest.sec()
                    || (child.sec() == newest.sec() && child.nsec() >= newest.nsec())) {
                    newest = child;
                }
            }
            rows.set(i, new Row(dir.key(), dir.mode(), dir.size(), newest.sec(), newest.nsec(), newest.uid(),
                newest.gid(), 0, NO_PARTITION, null, true));
        }
    }

    static byte[] parentKey(final byte[] key) {
        int slash = key.length - 1;
        while (slash >= 0 && key[slash] != '/') {
            slash--;
        }
        return Arrays.copyOf(key, Math.max(slash, 0));
    }

    int size() {
        return rows.size();
    }

    byte[] key(final int index) {
        return rows.get(index).key();
    }

    Row row(final int index) {
        return rows.get(index);
    }

    int indexOf(final byte[] key) {
        for (int i = 0; i < rows.size(); i++) {
            if (Arrays.equals(rows.get(i).key(), key)) {
                return i;
            }
        }
        return -1;
    }

    /** Indices of the entries whose parent is entry {@code index}, in key order. */
    List<Integer> children(final int index) {
        final List<Integer> result = new ArrayList<>();
        final byte[] dir = rows.get(index).key();
        for (int i = 1; i < rows.size(); i++) {
            if (Arrays.equals(parentKey(rows.get(i).key()), dir)) {
                result.add(i);
            }
        }
        return result;
    }

    List<byte[]> keysWithPrefix(final String prefix) {
        final List<byte[]> result = new ArrayList<>();
        final byte[] p = prefix.getBytes(StandardCharsets.US_ASCII);
        for (final Row r : rows) {
            if (r.key().length > p.length && Arrays.equals(r.key(), 0, p.length, p, 0, p.length)) {
                result.add(r.key());
            }
        }
        return result;
    }

    static byte[] name(final byte[] key) {
        final int parentLength = parentKey(key).length;
        return Arrays.copyOfRange(key, parentLength == 0 ? 0 : parentLength + 1, key.length);
    }

    /** The vector line for entry {@code index}: space-separated name=value fields, hex for byte strings. */
    String line(final int index) {
        final Row r = rows.get(index);
        final StringBuilder sb = new StringBuilder("entry key=").append(KeyText.hex(r.key()))
            .append(" index=").append(index)
            .append(" hash=").append(String.format("%016x", Fnv1a64.hash(r.key())))
            .append(" mode=0").append(Integer.toOctalString(r.mode()))
            .append(" size=").append(r.size())
            .append(" mtime=").append(r.sec()).append('.').append(String.format("%09d", r.nsec()))
            .append(" uid=").append(r.uid()).append(" gid=").append(r.gid())
            .append(" flags=").append(r.flags()).append(" partition=").append(r.partition())
            .append(" parent=").append(index == 0 ? 0 : indexOf(parentKey(r.key())))
            .append(" children=");
        if (isDirectory(r.mode())) {
            final List<String> names = new ArrayList<>();
            for (final int c : children(index)) {
                names.add(KeyText.hex(name(rows.get(c).key())));
            }
            sb.append(String.join(",", names));
        } else {
            sb.append('-');
        }
        return sb.append(" target=").append(r.target() != null ? KeyText.hex(r.target()) : "-").toString();
    }
}
