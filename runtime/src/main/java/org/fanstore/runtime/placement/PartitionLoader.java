package org.fanstore.runtime.placement;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import java.util.zip.CRC32C;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.PartitionReader;
import org.fanstore.runtime.index.IndexRecord;

/**
 * Brings this rank's partitions from the shared file system to node-local storage, once: each partition is
 * copied sequentially (the only time the shared FS is read) and checked against the manifest's whole-file
 * CRC32C, then every uncompressed file is unpacked to {@code <local>/files/<key>} so the shim can open it
 * directly. Compressed bodies stay in the local partition copy and are decompressed on demand.
 *
 * <p>The whole-file CRC covers every body, so unpacking uses in-kernel copies without re-checking per file.
 * A key that is not valid UTF-8 or too long for the local file system is not unpacked; it is served through the
 * cache like a compressed file (still correct, one round trip slower).
 */
public final class PartitionLoader {
    private static final int COPY_BUFFER = 8 << 20;
    private static final int MAX_LOCAL_PATH = 4000;

    private final Path dataset;
    private final Manifest manifest;
    private final Path partsDir;
    private final Path filesDir;

    public PartitionLoader(Path dataset, Manifest manifest, Path localDir) throws IOException {
        this.dataset = dataset;
        this.manifest = manifest;
        this.partsDir = Files.createDirectories(localDir.resolve("parts"));
        this.filesDir = Files.createDirectories(localDir.resolve("files"));
    }

    /** Where LOCAL_RAW files lie: {@code <filesDir>/<key>}. */
    public Path filesDir() {
        return filesDir;
    }

    /** The partitions this rank holds: its regular ones (owner or replica) and every broadcast one. */
    public static List<PartitionInfo> heldBy(Manifest manifest, Placement placement, int rank) {
        List<PartitionInfo> out = new ArrayList<>();
        for (PartitionInfo p : manifest.regularPartitions()) {
            if (placement.holds(rank, p.index())) {
                out.add(p);
            }
        }
        out.addAll(manifest.broadcastPartitions());
        return out;
    }

    /** Copies and CRC-checks one partition; progress receives bytes as they are copied. */
    public PartitionReader copy(PartitionInfo info, LongConsumer progress) throws IOException {
        Path source = dataset.resolve(info.fileName());
        Path target = partsDir.resolve(info.fileName());
        CRC32C crc = new CRC32C();
        long copied = 0;
        try (FileChannel in = FileChannel.open(source, StandardOpenOption.READ);
             FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer buf = ByteBuffer.allocateDirect(COPY_BUFFER);
            while (in.read(buf) >= 0) {
                buf.flip();
                int n = buf.remaining();
                if (n == 0) {
                    break;
                }
                crc.update(buf.duplicate());
                while (buf.hasRemaining()) {
                    out.write(buf);
                }
                buf.clear();
                copied += n;
                progress.accept(n);
            }
        } catch (NoSuchFileException e) {
            throw new IOException("partition " + info.fileName() + " (listed in " + Manifest.FILE_NAME
                    + ") is missing from " + dataset + ": restore it or run fanstore prep again", e);
        }
        if (copied != info.bytes() || (int) crc.getValue() != info.crc32c()) {
            throw new IOException(String.format("partition %s in %s is damaged: %d bytes with CRC32C %08x, the"
                            + " manifest says %d bytes with %08x; run fanstore verify %s",
                    info.fileName(), dataset, copied, (int) crc.getValue(), info.bytes(), info.crc32c(), dataset));
        }
        return PartitionReader.open(target);
    }

    /**
     * Unpacks the uncompressed files of a local partition and returns its entries as index records. Keys are
     * {@code <dataset name>/<path>} (the dataset root is the key {@code <name>}).
     *
     * @param unpack which entries to write out: false for a replica-free rank that only indexes
     */
    public List<IndexRecord> index(PartitionReader reader, int partitionId, boolean unpack) throws IOException {
        List<IndexRecord> out = new ArrayList<>(reader.entries().size());
        byte[] name = manifest.nameBytes();
        try (FileChannel in = FileChannel.open(reader.file(), StandardOpenOption.READ)) {
            for (PartitionEntry e : reader.entries()) {
                byte[] key = keyOf(name, e.path());
                byte[] link = e.isSymlink() ? reader.readRaw(e) : null;
                if (unpack && e.isFile() && e.codec() == 0) {
                    unpackRaw(in, reader, e, key);
                }
                out.add(new IndexRecord(key, e.type(), e.mode(), e.uid(), e.gid(), e.mtimeSec(), e.mtimeNsec(),
                        e.rawLength(), e.storedLength(), e.bodyOffset(), e.codec(), e.crc32c(), partitionId, link));
            }
        }
        return out;
    }

    /** Whether {@code key} can be (and so was) unpacked under filesDir for a direct open. */
    public static boolean unpackable(byte[] key) {
        return localName(key) != null;
    }

    private void unpackRaw(FileChannel in, PartitionReader reader, PartitionEntry e, byte[] key) throws IOException {
        String rel = localName(key);
        if (rel == null) {
            return;
        }
        Path target = filesDir.resolve(rel);
        Files.createDirectories(target.getParent());
        try (FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            long done = 0;
            while (done < e.storedLength()) {
                long n = in.transferTo(e.bodyOffset() + done, e.storedLength() - done, out);
                if (n <= 0) {
                    throw new IOException(reader.file() + ": body of " + e.pathString() + " ends early");
                }
                done += n;
            }
        }
    }

    /** The key as a local relative path, or null when the local file system cannot hold it byte-exact. */
    private static String localName(byte[] key) {
        if (key.length > MAX_LOCAL_PATH) {
            return null;
        }
        try {
            String s = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(key)).toString();
            for (String component : s.split("/")) {
                if (component.getBytes(StandardCharsets.UTF_8).length > 255) {
                    return null;
                }
            }
            return s;
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    static byte[] keyOf(byte[] name, byte[] path) {
        if (path.length == 0) {
            return name.clone();
        }
        byte[] key = new byte[name.length + 1 + path.length];
        System.arraycopy(name, 0, key, 0, name.length);
        key[name.length] = '/';
        System.arraycopy(path, 0, key, name.length + 1, path.length);
        return key;
    }
}
