package org.fanstore.runtime.output;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * The drain's crash-safe copy: a copy is never visible half-done. It is written to a hidden partial name beside the
 * target ({@code .NAME.fanstore-partial-PID-N}), fsynced, re-read and compared (CRC32C and length), given its mode
 * and mtime; then {@link DirectoryDrain} renames it into place and fsyncs the directory. A copy cut off by SIGKILL
 * leaves only a partial name, which the next job on the directory recognises ({@link #partialOwner}) and removes.
 */
public final class CrashSafeCopy {
    private static final int BUFFER_BYTES = 1 << 20;
    /** In partial names: unique across the ranks of a node and across a crashed run's leftovers. */
    private static final long PID = ProcessHandle.current().pid();
    /** A partial name: {@code .NAME.fanstore-partial-PID-N} (groups: NAME, PID). */
    private static final Pattern PARTIAL = Pattern.compile("\\.(.+)\\.fanstore-partial-([0-9]{1,10})-[0-9]+");

    private final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_BYTES);
    private long partialSequence;

    /** A new partial name beside {@code target}. */
    synchronized Path partial(Path target) {
        return target.resolveSibling(partialName(target.getFileName().toString(), PID, partialSequence++));
    }


    /**
     * Copies {@code from} (not following a symlink) to the new file {@code to}; returns the CRC32C of the bytes. The
     * source is read with O_NOATIME ({@link NoAtime}): the job's file keeps the atime the job gave it.
     */
    long copyWithCrc(Path from, Path to) throws IOException {
        CRC32C crc = new CRC32C();
        int in = NoAtime.openFile(from);
        try (FileChannel out = FileChannel.open(to, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            while (true) {
                buffer.clear();
                if (NoAtime.read(in, from, buffer) < 0) {
                    break;
                }
                buffer.flip();
                crc.update(buffer.duplicate());
                while (buffer.hasRemaining()) {
                    out.write(buffer);
                }
            }
        } finally {
            NoAtime.close(in);
        }
        return crc.getValue();
    }

    /**
     * Gives the written partial its mode and mtime, fsyncs it and checks it against the source: its length and the
     * CRC32C of its bytes read back; throws when they differ.
     */
    void seal(Path partial, int mode, long mtimeNanos, long size, long sourceCrc) throws IOException {
        Files.setPosixFilePermissions(partial, permissions(mode));
        Files.setLastModifiedTime(partial, FileTime.from(Instant.ofEpochSecond(0, mtimeNanos)));
        long length = Files.size(partial);
        long copyCrc = crcOf(partial);
        if (length != size || copyCrc != sourceCrc) {
            throw new IOException("the copy does not match: " + length + " bytes (CRC32C " + hex(copyCrc)
                    + ") after writing " + size + " bytes (CRC32C " + hex(sourceCrc) + ")");
        }
    }

    /** The file's CRC32C, and the file fsynced (its data, mode and mtime). */
    private long crcOf(Path file) throws IOException {
        CRC32C crc = new CRC32C();
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
            while (true) {
                buffer.clear();
                if (in.read(buffer) < 0) {
                    in.force(true);
                    return crc.getValue();
                }
                buffer.flip();
                crc.update(buffer);
            }
        }
    }

    /** A rename or create is durable only once its directory is: fsync the directory itself. */
    static void fsyncDirectory(Path directory) throws IOException {
        try (FileChannel d = FileChannel.open(directory, StandardOpenOption.READ)) {
            d.force(true);
        }
    }

    static void deleteQuietly(Path p) {
        if (p != null) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException ignored) {
                // a leftover partial name is harmless: it is hidden and never the final name
            }
        }
    }

    static String partialName(String name, long pid, long sequence) {
        return "." + name + ".fanstore-partial-" + pid + "-" + sequence;
    }

    /**
     * The runtime pid that was copying into the partial name {@code fileName}, or -1 when it is not one: a copy
     * cut off by SIGKILL (or a crash) leaves that name, which the next job on the directory reports and removes.
     */
    public static long partialOwner(String fileName) {
        Matcher m = PARTIAL.matcher(fileName);
        return m.matches() ? Long.parseLong(m.group(2)) : -1;
    }

    /** The final name a partial name was to become ({@code NAME}); only for names {@link #partialOwner} knows. */
    public static String partialTarget(String fileName) {
        Matcher m = PARTIAL.matcher(fileName);
        if (!m.matches()) {
            throw new IllegalArgumentException(fileName + " is not a partial name");
        }
        return m.group(1);
    }

    private static String hex(long crc) {
        return String.format("%08x", crc);
    }

    static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] all = PosixFilePermission.values();  // OWNER_READ .. OTHERS_EXECUTE = 0400..0001
        for (int i = 0; i < all.length; i++) {
            if ((mode & (0400 >> i)) != 0) {
                set.add(all[i]);
            }
        }
        return set;
    }
}
