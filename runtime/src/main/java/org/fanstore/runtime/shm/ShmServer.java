package org.fanstore.runtime.shm;

import static org.fanstore.runtime.timing.Timing.*;
import static org.fanstore.runtime.shm.ControlFileDescriptor.*;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.ReentrantReadWriteLock;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * The runtime's end of the shim protocol (README.md in this package): owns the control file and the dispatcher
 * thread; answers arrive through {@link Responder}s from any thread.
 * Lifecycle: {@link #create} maps and publishes the file and starts serving; {@link #close} marks the server
 * STOPPING (waiting clients fail with EIO at once), stops the dispatcher with a bounded join and unmaps, unless
 * something still runs on the mapping, in which case the mapping is left in place rather than risk a crash.
 */
public final class ShmServer implements AutoCloseable {
    private final ControlFile file;
    private final UnsafeBuffer ctl;
    private final AtomicIntegerArray inFlight;
    private final Dispatcher dispatcher;
    private final Thread dispatcherThread;
    private final boolean deleteOnClose;
    /** Answers hold the read lock while writing a slot; close takes the write lock before unmapping. */
    private final ReentrantReadWriteLock mappingLock = new ReentrantReadWriteLock();
    private boolean closed;  // guarded by mappingLock

    /** The descriptor holding {@code <ctl>.lock}'s lock; closed by {@link #close}. */
    private FileChannel lock;

    /** {@code <ctl>.clients}: the clients' liveness locks; closed (and deleted with ctl) by {@link #close}. */
    private final ClientLocks clients;

    private ShmServer(final ControlFile file, final RequestHandler handler, final boolean deleteOnClose,
        final ClientLocks clients) {
        this.file = file;
        this.clients = clients;
        this.ctl = file.buffer;
        this.inFlight = new AtomicIntegerArray(file.slotCount);
        this.deleteOnClose = deleteOnClose;
        this.dispatcher = new Dispatcher(this, file, inFlight, handler, clients);
        this.dispatcherThread = new Thread(dispatcher, "fanstore-shm-dispatcher");
        this.dispatcherThread.setDaemon(true);
    }

    /**
     * Creates {@code ctlFile} (mode 0600; replaces only a stale file of ours) and starts serving. Keeps the file
     * on close.
     */
    public static ShmServer create(final Path ctlFile, final int slotCount, final int slotSize, final int ringCapacity,
        final RequestHandler handler) throws IOException {
        return create(ctlFile, slotCount, slotSize, ringCapacity, handler, false);
    }

    /** As {@link #create(Path, int, int, int, RequestHandler)}, deleting the file on close if asked. */
    public static ShmServer create(final Path ctlFile, final int slotCount, final int slotSize, final int ringCapacity,
        final RequestHandler handler, final boolean deleteOnClose) throws IOException {
        final FileChannel lock = takeLock(ctlFile);
        ClientLocks clients = null;
        try {
            clients = ClientLocks.create(ctlFile);  // before ctl: a client that maps ctl finds it
            final ControlFile file = ControlFile.create(ctlFile, slotCount, slotSize, ringCapacity);
            final ShmServer server = new ShmServer(file, handler, deleteOnClose, clients);
            server.lock = lock;
            server.dispatcherThread.start();
            return server;
        } catch (final IOException | RuntimeException e) {
            if (clients != null) {
                clients.close();
            }
            lock.close();
            throw e;
        }
    }

    /**
     * Creates {@code <ctl>.lock} (0600) and takes an exclusive POSIX record lock on it, held until {@link #close}
     * has stored STOPPING: clients tell a slow runtime (lock held) from a dead one (the kernel freed it) in any
     * PID namespace (README, "Liveness"). Held by another live server: refused.
     */
    private static FileChannel takeLock(final Path ctlFile) throws IOException {
        final Path path = ctlFile.resolveSibling(ctlFile.getFileName() + ".lock");
        final FileChannel channel = FileChannel.open(path,
            java.util.Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            if (channel.tryLock() == null) {
                throw new FileAlreadyExistsException(path.toString(), null, "locked by a live server");
            }
        } catch (final IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        return channel;
    }

    private void releaseLock() {
        try {
            if (lock != null) {
                lock.close();
            }
        } catch (final IOException ignored) {
            // closing drops the lock whatever close reports
        }
    }

    public Path path() {
        return file.path;
    }

    public int slotCount() {
        return file.slotCount;
    }

    /** Slots currently FREE (a snapshot; for monitoring and tests). */
    public int freeSlotCount() {
        mappingLock.readLock().lock();
        try {
            if (closed) {
                return 0;
            }
            int free = 0;
            for (int slot = 0; slot < file.slotCount; slot++) {
                free += file.slotState(slot) == SLOT_FREE ? 1 : 0;
            }
            return free;
        } finally {
            mappingLock.readLock().unlock();
        }
    }

    /** The dispatcher thread (for CPU accounting in tests and monitoring). */
    public Thread dispatcherThread() {
        return dispatcherThread;
    }

    /**
     * Writes an answer into an in-flight slot and hands it to the client (SUBMITTED -> DONE, wake), or frees the
     * slot if the client abandoned it. Ignored after close.
     */
    void answer(final int slot, final int result, final byte[] path) {
        mappingLock.readLock().lock();
        try {
            if (closed) {
                return;
            }
            file.putResponse(slot, result, path);
            file.stampAnswer(slot, System.nanoTime());
            // The CAS is a full fence: the client's acquire load of DONE sees result and payload.
            if (file.casSlotState(slot, SLOT_SUBMITTED, SLOT_DONE)) {
                Futex.wake(file.slotStateAddress(slot), 1);
            } else {
                file.casSlotState(slot, SLOT_ABANDONED, SLOT_FREE);
            }
            inFlight.set(slot, 0);
        } finally {
            mappingLock.readLock().unlock();
        }
    }

    @Override
    public void close() {
        mappingLock.readLock().lock();
        try {
            if (closed) {
                return;
            }
            ctl.putIntRelease(SERVER_STATE_OFFSET, SERVER_STOPPING);
        } finally {
            mappingLock.readLock().unlock();
        }
        dispatcher.stop();
        boolean stopped = join();
        if (stopped) {
            clients.close();  // the sweeper ran on the dispatcher thread, which has ended
        }
        wakeWaitingClients();
        releaseLock();  // after STOPPING: a client never sees "no lock" while the state still says RUNNING
        try {
            if (mappingLock.writeLock().tryLock(CLOSE_JOIN_MILLIS, TimeUnit.MILLISECONDS)) {
                try {
                    if (!closed) {
                        closed = true;
                        if (stopped) {
                            file.unmap();
                        }
                    }
                } finally {
                    mappingLock.writeLock().unlock();
                }
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (deleteOnClose) {
            deleteQuietly();
        }
    }

    private boolean join() {
        try {
            dispatcherThread.join(CLOSE_JOIN_MILLIS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !dispatcherThread.isAlive();
    }

    /** Clients in a futex wait re-check the server state when woken: STOPPING makes them return EIO now. */
    private void wakeWaitingClients() {
        for (int slot = 0; slot < file.slotCount; slot++) {
            if (file.slotState(slot) == SLOT_SUBMITTED) {
                Futex.wake(file.slotStateAddress(slot), Integer.MAX_VALUE);
            }
        }
    }

    private void deleteQuietly() {
        try {
            Files.deleteIfExists(file.path);
            Files.deleteIfExists(clients.path);
        } catch (final IOException e) {
            // the job directory is removed as a whole on exit; a leftover file is harmless
        }
    }
}
