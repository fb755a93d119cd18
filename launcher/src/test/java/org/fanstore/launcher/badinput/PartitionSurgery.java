package org.fanstore.launcher.badinput;

import static org.fanstore.prep.format.PartitionDescriptor.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;
import org.fanstore.prep.format.TableInfo;
import org.fanstore.launcher.run.FanstoreProcess;

/**
 * A copy of the golden one-partition dataset (tests/vectors/partition) to damage on purpose: field edits by
 * the layout's own constants, then, as a forger would, the CRCs that guard them recomputed so the damage reaches
 * the check meant to catch it instead of the first checksum on the way.
 */
public final class PartitionSurgery {
    public static final String PARTITION = "part-00000.fsp";

    private byte[] part;
    private String manifest;
    /** The dataset's metadata table, copied along untouched: damage to a partition leaves it as prep wrote it. */
    private final byte[] table;

    private PartitionSurgery(byte[] part, String manifest, byte[] table) {
        this.part = part;
        this.manifest = manifest;
        this.table = table;
    }

    public static Path goldenDir() {
        return FanstoreProcess.repo().resolve("tests/vectors/partition");
    }

    public static PartitionSurgery golden() throws IOException {
        return new PartitionSurgery(Files.readAllBytes(goldenDir().resolve(PARTITION)),
                Files.readString(goldenDir().resolve("manifest.txt"), StandardCharsets.US_ASCII),
                Files.readAllBytes(goldenDir().resolve(TableInfo.FILE_NAME)));
    }

    /** A copy of a one-partition dataset {@code fanstore prep} wrote to {@code dir}. */
    public static PartitionSurgery of(Path dir) throws IOException {
        return new PartitionSurgery(Files.readAllBytes(dir.resolve(PARTITION)),
                Files.readString(dir.resolve("manifest.txt"), StandardCharsets.ISO_8859_1),
                Files.readAllBytes(dir.resolve(TableInfo.FILE_NAME)));
    }

    public byte[] part() {
        return part;
    }

    public PartitionSurgery part(byte[] bytes) {
        part = bytes;
        return this;
    }

    public String manifest() {
        return manifest;
    }

    public PartitionSurgery manifest(String text) {
        manifest = text;
        return this;
    }

    /** Replaces the first manifest line starting with {@code key + " "} by {@code line} (or removes it: null). */
    public PartitionSurgery manifestLine(String key, String line) {
        StringBuilder sb = new StringBuilder();
        boolean done = false;
        for (String l : manifest.split("\n", -1)) {
            if (!done && l.startsWith(key + " ")) {
                done = true;
                if (line != null) {
                    sb.append(line).append('\n');
                }
                continue;
            }
            sb.append(l).append('\n');
        }
        manifest = sb.substring(0, sb.length() - 1);
        return this;
    }

    private ByteBuffer le() {
        return ByteBuffer.wrap(part).order(ByteOrder.LITTLE_ENDIAN);
    }

    public long headerLong(int offset) {
        return le().getLong(offset);
    }

    public PartitionSurgery putInt(int at, int value) {
        le().putInt(at, value);
        return this;
    }

    public PartitionSurgery putLong(int at, long value) {
        le().putLong(at, value);
        return this;
    }

    public int entryCount() {
        return (int) le().getLong(ENTRY_COUNT_OFFSET);
    }

    /** Absolute offset of entry i (table order). */
    public int entryStart(int i) {
        int at = HEADER_LENGTH;
        for (int k = 0; k < i; k++) {
            at += PATH_OFFSET + le().getInt(at + PATH_LENGTH_OFFSET) + ENTRY_FIXED_LENGTH;
        }
        return at;
    }

    public String path(int i) {
        int at = entryStart(i);
        return new String(part, at + PATH_OFFSET, le().getInt(at + PATH_LENGTH_OFFSET), StandardCharsets.ISO_8859_1);
    }

    /** Index of the entry with this path. */
    public int entry(String path) {
        for (int i = 0; i < entryCount(); i++) {
            if (path(i).equals(path)) {
                return i;
            }
        }
        throw new IllegalArgumentException("no entry " + path);
    }

    /** Absolute offset of a field that follows entry i's path bytes (TYPE_OFFSET, BODY_CRC_OFFSET...). */
    public int field(int i, int fieldOffset) {
        int at = entryStart(i);
        return at + PATH_OFFSET + le().getInt(at + PATH_LENGTH_OFFSET) + fieldOffset;
    }

    /** Absolute offset of entry i's body. */
    public long body(int i) {
        return le().getLong(DATA_OFFSET_OFFSET) + le().getLong(field(i, BODY_OFFSET_OFFSET));
    }

    /** Replaces entry i's path bytes (any length): the table grows or shrinks, bodies move with the data area. */
    public PartitionSurgery renameEntry(int i, byte[] newPath) {
        int at = entryStart(i);
        int oldLen = le().getInt(at + PATH_LENGTH_OFFSET);
        long tableLength = le().getLong(TABLE_LENGTH_OFFSET);
        long dataOffset = le().getLong(DATA_OFFSET_OFFSET);
        byte[] table = new byte[(int) tableLength + newPath.length - oldLen];
        int rel = at - HEADER_LENGTH;
        System.arraycopy(part, HEADER_LENGTH, table, 0, rel + PATH_OFFSET);
        ByteBuffer.wrap(table).order(ByteOrder.LITTLE_ENDIAN).putInt(rel + PATH_LENGTH_OFFSET, newPath.length);
        System.arraycopy(newPath, 0, table, rel + PATH_OFFSET, newPath.length);
        System.arraycopy(part, at + PATH_OFFSET + oldLen, table, rel + PATH_OFFSET + newPath.length,
                (int) tableLength - rel - PATH_OFFSET - oldLen);
        long newData = dataOffset(table.length);
        byte[] out = new byte[(int) (newData + part.length - dataOffset)];
        System.arraycopy(part, 0, out, 0, HEADER_LENGTH);
        System.arraycopy(table, 0, out, HEADER_LENGTH, table.length);
        System.arraycopy(part, (int) dataOffset, out, (int) newData, (int) (part.length - dataOffset));
        part = out;
        putLong(TABLE_LENGTH_OFFSET, table.length);
        putLong(DATA_OFFSET_OFFSET, newData);
        return this;
    }

    /** Table CRC, header CRC and the manifest's size and whole-file CRC, recomputed in that order. */
    public PartitionSurgery forge() {
        return forgeTable().forgeHeader().forgeManifest();
    }

    public PartitionSurgery forgeTable() {
        CRC32C crc = new CRC32C();
        crc.update(part, HEADER_LENGTH, (int) le().getLong(TABLE_LENGTH_OFFSET));
        return putInt(TABLE_CRC_OFFSET, (int) crc.getValue());
    }

    public PartitionSurgery forgeHeader() {
        CRC32C crc = new CRC32C();
        crc.update(part, 0, HEADER_CRC_OFFSET);
        return putInt(HEADER_CRC_OFFSET, (int) crc.getValue());
    }

    /** The manifest's partition line made to describe the bytes as they now are. */
    public PartitionSurgery forgeManifest() {
        CRC32C crc = new CRC32C();
        crc.update(part);
        String[] f = null;
        for (String l : manifest.split("\n")) {
            if (l.startsWith("partition ")) {
                f = l.split(" ");
            }
        }
        if (f == null) {
            return this;
        }
        return manifestLine("partition", String.format("partition %s %s %d %08x %s %s", f[1], f[2], part.length,
                (int) crc.getValue(), f[5], f[6]));
    }

    public Path writeTo(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.write(dir.resolve(PARTITION), part);
        Files.write(dir.resolve(TableInfo.FILE_NAME), table);
        Files.writeString(dir.resolve("manifest.txt"), manifest, StandardCharsets.ISO_8859_1);
        return dir;
    }
}
