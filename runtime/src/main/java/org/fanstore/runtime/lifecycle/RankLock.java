package org.fanstore.runtime.lifecycle;

import static org.fanstore.runtime.timing.Timing.*;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;

/**
 * Who owns one rank's directories on this node: an fcntl lock on {@code rank-<r>.lock} in the shared-memory job
 * root, held by the launcher for the whole job, with its pid inside for messages. The kernel drops the lock when
 * its holder dies, however it dies, so a stale pid never blocks a new job, and a second launcher with the same
 * job id learns the first one's pid instead of deleting its directories. Whoever deletes the directories
 * deletes the lock file while holding the lock; a waiter that then gets the lock on the unlinked file notices
 * (the path no longer names the file it opened) and tries again.
 */
public final class RankLock implements AutoCloseable {
    private final Path file;
    private final FileChannel channel;
    private final FileLock lock;

    private RankLock(Path file, FileChannel channel, FileLock lock) {
        this.file = file;
        this.channel = channel;
        this.lock = lock;
    }

    /** The lock is held by another live process. */
    public static final class HeldException extends IOException {
        private static final long serialVersionUID = 1L;
        private final String holder;

        HeldException(Path file, String holder) {
            super(file + " is locked by pid " + holder);
            this.holder = holder;
        }

        /** The holder's pid as it wrote it, or "unknown". */
        public String holder() {
            return holder;
        }
    }

    /**
     * Takes the lock, waiting at most {@code waitMillis} for a holder to go away, and writes this process's pid
     * into the file.
     *
     * @throws HeldException if another process still holds it after the wait
     */
    public static RankLock acquire(Path file, long waitMillis) throws IOException {
        long deadline = System.nanoTime() + waitMillis * 1_000_000;
        while (true) {
            FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            Object opened = key(file);
            FileLock lock = null;
            try {
                lock = channel.tryLock();
                if (lock != null && opened != null && opened.equals(key(file))) {
                    byte[] pid = Long.toString(ProcessHandle.current().pid()).getBytes(StandardCharsets.US_ASCII);
                    channel.truncate(0);
                    channel.write(ByteBuffer.wrap(pid), 0);
                    return new RankLock(file, channel, lock);
                }
            } catch (IOException | RuntimeException e) {
                channel.close();
                throw e;
            }
            String holder = lock == null ? holderOf(channel) : null;
            channel.close(); // also releases a lock taken on a file unlinked meanwhile
            if (holder != null && System.nanoTime() - deadline > 0) {
                throw new HeldException(file, holder);
            }
            try {
                Thread.sleep(holder == null ? LOCK_RETRY_FREE_MILLIS : LOCK_RETRY_HELD_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for " + file, e);
            }
        }
    }

    /** Deletes the lock file (still holding the lock), then releases it. */
    public void deleteAndRelease() {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            System.err.println("fanstore: could not remove " + file + ": " + e.getMessage());
        }
        close();
    }

    @Override
    public void close() {
        try {
            lock.release();
            channel.close();
        } catch (IOException ignored) {
            // closing the channel drops the lock in any case
        }
    }

    private static Object key(Path file) {
        try {
            return Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
        } catch (NoSuchFileException gone) {
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    private static String holderOf(FileChannel channel) {
        try {
            ByteBuffer b = ByteBuffer.allocate(32);
            channel.read(b, 0);
            String text = new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII).trim();
            return text.isEmpty() ? "unknown" : text;
        } catch (IOException e) {
            return "unknown";
        }
    }

    @Override
    public String toString() {
        return "RankLock[" + Objects.toString(file) + "]";
    }
}
