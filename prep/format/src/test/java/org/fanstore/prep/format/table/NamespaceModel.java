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
 * What a table written from a namespace must say, derived the simple way (a sorted map, prefix scans, a
 * breadth-first list) rather than the writer's way, so the vectors check the writer instead of echoing it.
 */
final class NamespaceModel {
    record Row(byte[] key, int mode, long size, long sec, int nsec, int uid, int gid, int flags, int partition,
        byte[] target, boolean added, long bodyOffset, long storedLength, int crc) {
    }

    private final List<Row> rows;

    NamespaceModel(final List<NamespaceEntry> given) {
        final TreeMap<byte[], Row> sorted = new TreeMap<>(Arrays::compareUnsigned);
        for (final NamespaceEntry e : given) {
            final long size = isDirectory(e.mode()) ? DIRECTORY_SIZE :
                isSymlink(e.mode()) ? e.linkTarget().length : e.size();
            sorted.put(e.key(), new Row(e.key(), e.mode(), size, e.mtimeSec(), e.mtimeNsec(), e.uid(), e.gid(),
                e.flags(), e.partition(), e.linkTarget(), false, e.partition() == NO_PARTITION ? 0 : e.bodyOffset(),
                e.partition() == NO_PARTITION ? 0 : e.storedLength(), e.partition() == NO_PARTITION ? 0 : e.crc32c()));
        }
        for (final NamespaceEntry e : given) {
            byte[] key = e.key();
            while (key.length > 0) {
                key = parentKey(key);
                sorted.putIfAbsent(key, new Row(key, S_IFDIR | 0755, DIRECTORY_SIZE, 0, 0, 0, 0, 0, NO_PARTITION,
                    null, true, 0, 0, 0));
            }
        }
        final List<Row> rows = new ArrayList<>(sorted.values());
        // Added directories take mtime/uid/gid from their newest child; deepest first so added children are settled.
        for (int i = rows.size() - 1; i >= 0; i--) {
            final Row dir = rows.get(i);
            if (!dir.added()) {
                continue;
            }
            Row newest = null;
            for (final int c : children(rows, i)) {
                final Row child = rows.get(c);
                if (newest == null || child.sec() > newest.sec()
                    || (child.sec() == newest.sec() && child.nsec() >= newest.nsec())) {
                    newest = child;
                }
            }
            rows.set(i, new Row(dir.key(), dir.mode(), dir.size(), newest.sec(), newest.nsec(), newest.uid(),
                newest.gid(), 0, NO_PARTITION, null, true, 0, 0, 0));
        }
        // Breadth first: the root, then each directory's children (name order) as the directory comes up.
        this.rows = new ArrayList<>(List.of(rows.get(0)));
        for (int i = 0; i < this.rows.size(); i++) {
            final Row dir = this.rows.get(i);
            if (!isDirectory(dir.mode())) {
                continue;
            }
            for (final Row r : rows) {
                if (r.key().length > 0 && Arrays.equals(parentKey(r.key()), dir.key())) {
                    this.rows.add(r);
                }
            }
        }
    }

    /** Whether entry i's stored name is a suffix of its name, its parent's (not the root's) name the prefix. */
    boolean extendsParent(final int index) {
        if (index == 0) {
            return false;
        }
        final byte[] key = rows.get(index).key();
        final byte[] parentKey = parentKey(key);
        final int p = indexOf(parentKey);
        if (p == 0 || extendsParent(p)) {
            return false;
        }
        final byte[] name = name(key);
        final byte[] parentName = name(parentKey);
        return parentName.length < name.length && Arrays.equals(name, 0, parentName.length, parentName, 0,
            parentName.length);
    }

    /** The bytes of entry i's name the table stores. */
    byte[] storedName(final int index) {
        if (index == 0) {
            return new byte[0];
        }
        final byte[] name = name(rows.get(index).key());
        return extendsParent(index) ? Arrays.copyOfRange(name, name(parentKey(rows.get(index).key())).length,
            name.length) : name;
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

    /** Indices of the entries whose parent is entry {@code index}, in entry order (name order: the model sorts). */
    List<Integer> children(final int index) {
        return children(rows, index);
    }

    private static List<Integer> children(final List<Row> rows, final int index) {
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
            .append(" flags=").append(r.flags() | (extendsParent(index) ? FLAG_NAME_EXTENDS_PARENT : 0))
            .append(" partition=").append(r.partition())
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
        sb.append(" target=").append(r.target() != null ? KeyText.hex(r.target()) : "-");
        sb.append(" stored=").append(KeyText.hex(storedName(index)));
        return sb.append(" body_offset=").append(r.bodyOffset()).append(" stored_length=").append(r.storedLength())
            .append(" body_crc=").append(String.format("%08x", r.crc())).toString();
    }
}
