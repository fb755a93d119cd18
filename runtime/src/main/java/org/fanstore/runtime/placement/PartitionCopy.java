package org.fanstore.runtime.placement;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.LongConsumer;
import java.util.zip.CRC32C;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.PartitionFiles;
import org.fanstore.prep.format.PartitionInfo;
import org.fanstore.prep.format.WritePieces;

/**
 * The one read of a partition from the shared file system, as a bounded copy: the source must be a regular file
 * (checked by stat before it is opened: a FIFO would block the open, {@code /dev/zero} would fill the local disk)
 * of exactly the size the manifest gives, and no more than that many bytes are read. A failed write (the local
 * disk full) names the target, the partition's size and how far the copy got.
 */
final class PartitionCopy {
    private static final int COPY_BUFFER = WritePieces.BYTES;

    private PartitionCopy() {
    }

    /** Copies {@code source} to the new file {@code target}, feeding {@code crc}; returns the bytes copied. */
    static long copy(Path dataset, PartitionInfo info, Path source, Path target, CRC32C crc, LongConsumer progress)
            throws IOException {
        String notRegular = PartitionFiles.notRegular(source);
        if (notRegular != null) {
            throw new IOException("partition " + source + " " + notRegular);
        }
        long copied = 0;
        try (FileChannel in = FileChannel.open(source, StandardOpenOption.READ)) {
            long size = in.size();
            if (size != info.bytes()) {
                throw new IOException(String.format("partition %s in %s is damaged: %d bytes, the manifest says %d"
                        + " bytes; run fanstore verify %s", info.fileName(), dataset, size, info.bytes(), dataset));
            }
            try (FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE)) {
                ByteBuffer buf = ByteBuffer.allocateDirect(COPY_BUFFER);
                while (copied < info.bytes()) {
                    buf.clear().limit((int) Math.min(COPY_BUFFER, info.bytes() - copied));
                    if (in.read(buf) < 0) {
                        break;   // shrank under us: the caller's size check names it
                    }
                    buf.flip();
                    int n = buf.remaining();
                    crc.update(buf.duplicate());
                    try {
                        while (buf.hasRemaining()) {
                            out.write(buf);
                        }
                    } catch (IOException e) {
                        throw writeFailed(info, target, copied + n - buf.remaining(), e);
                    }
                    copied += n;
                    progress.accept(n);
                }
            }
        } catch (NoSuchFileException e) {
            if (target.toString().equals(e.getFile())) {
                throw new IOException("cannot create " + target + ": its directory is gone", e);
            }
            throw new IOException("partition " + info.fileName() + " (listed in " + Manifest.FILE_NAME
                    + ") is missing from " + dataset + ": restore it or run fanstore prep again", e);
        }
        return copied;
    }

    private static IOException writeFailed(PartitionInfo info, Path target, long copied, IOException e) {
        String why = e.getMessage() == null ? "I/O error" : e.getMessage();
        String free = "";
        try {
            FileStore store = Files.getFileStore(target.getParent());
            free = ", " + store.getUsableSpace() + " bytes free there";
        } catch (IOException ignored) {
            // the message without the free space is still the right one
        }
        return new IOException(String.format("copying partition %s (%d bytes) to %s failed after %d bytes: %s%s;"
                + " free space there or point --local-dir at a larger file system", info.fileName(), info.bytes(),
                target, copied, why, free), e);
    }
}
