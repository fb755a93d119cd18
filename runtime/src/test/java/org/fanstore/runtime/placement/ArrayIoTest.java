package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import org.fanstore.runtime.cache.DiskFull;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ArrayIoTest {
    @TempDir
    Path dir;

    @Test
    void heapAndDirectBuffersMoveTheirRemainingBytesAtTheGivenPosition() throws IOException {
        Path f = Files.createFile(dir.resolve("f"));
        byte[] data = new byte[300_000];
        new Random(5).nextBytes(data);
        try (ArrayIo io = ArrayIo.open(f, true)) {
            ByteBuffer heap = ByteBuffer.wrap(data, 1_000, 200_000).slice().position(7);   // offset array, moved
            assertEquals(199_993, io.write(heap, 4096));
            assertEquals(heap.limit(), heap.position());
            ByteBuffer direct = ByteBuffer.allocateDirect(500).put(data, 0, 500).flip();
            assertEquals(500, io.write(direct, 0));

            byte[] back = new byte[250_000];
            ByteBuffer into = ByteBuffer.wrap(back, 3, 199_993);
            int got = 0;
            while (into.hasRemaining()) {
                got += io.read(into, 4096 + got);
            }
            assertArrayEquals(Arrays.copyOfRange(data, 1_007, 201_000), Arrays.copyOfRange(back, 3, 199_996));
            ByteBuffer d = ByteBuffer.allocateDirect(600);
            assertEquals(600, io.read(d, 0));
            byte[] head = new byte[500];
            d.flip().get(head);
            assertArrayEquals(Arrays.copyOf(data, 500), head);
            assertEquals(-1, io.read(ByteBuffer.allocate(10), Files.size(f)));
        }
        assertEquals(4096 + 199_993, Files.size(f));
    }

    @Test
    void failuresNameTheFileAndKeepTheKernelsReason() throws IOException {
        IOException missing = assertThrows(IOException.class, () -> ArrayIo.open(dir.resolve("nope"), false));
        assertTrue(missing.getMessage().contains(dir.resolve("nope").toString()), missing.getMessage());
        assertTrue(missing.getMessage().contains("No such file or directory"), missing.getMessage());

        Path f = Files.createFile(dir.resolve("ro"));
        try (ArrayIo ro = ArrayIo.open(f, false)) {
            IOException e = assertThrows(IOException.class, () -> ro.write(ByteBuffer.allocate(8), 0));
            assertTrue(e.getMessage().contains(f.toString()), e.getMessage());
        }
        // ENOSPC must read as the JDK's own text, which is how the puller and the cache recognise a full disk
        try (ArrayIo full = ArrayIo.open(Path.of("/dev/full"), true)) {
            IOException e = assertThrows(IOException.class, () -> full.write(ByteBuffer.wrap(new byte[64]), 0));
            assertTrue(DiskFull.causedBy(e), e.getMessage());
        }
    }

    /**
     * A descriptor closed under a call in progress is handed to the next open, and the call then writes into that
     * file. Writers hammer one file with small writes while it is closed and another thread keeps opening new files:
     * none of those may ever receive a byte, and every writer ends with ClosedChannelException.
     */
    @Test
    void closeWaitsForCallsInProgressSoNoWriteLandsInAFileOpenedAfterIt() throws Exception {
        byte[] one = {0x5a};
        for (int round = 0; round < 200; round++) {
            Path target = Files.createFile(dir.resolve("target"));
            ArrayIo io = ArrayIo.open(target, true);
            AtomicLong writes = new AtomicLong();
            List<Thread> writers = new ArrayList<>();
            List<Throwable> ends = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                Thread w = new Thread(() -> {
                    try {
                        for (long at = 0;; at++) {
                            io.write(ByteBuffer.wrap(one), at % 4096);
                            writes.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        synchronized (ends) {
                            ends.add(e);
                        }
                    }
                });
                writers.add(w);
                w.start();
            }
            while (writes.get() < 50) {
                Thread.onSpinWait();
            }
            io.close();
            List<ArrayIo> later = new ArrayList<>();
            List<Path> paths = new ArrayList<>();
            while (writers.stream().anyMatch(Thread::isAlive) || later.size() < 4) {
                Path p = Files.createFile(dir.resolve("later-" + later.size()));
                paths.add(p);
                later.add(ArrayIo.open(p, true));
            }
            for (int i = 0; i < later.size(); i++) {
                later.get(i).close();
                assertEquals(0, Files.size(paths.get(i)), "round " + round + ": a write after close landed in "
                        + paths.get(i).getFileName());
                Files.delete(paths.get(i));
            }
            Files.delete(target);
            assertEquals(3, ends.size());
            for (Throwable e : ends) {
                assertTrue(e instanceof ClosedChannelException, String.valueOf(e));
            }
            assertThrows(ClosedChannelException.class, () -> io.read(ByteBuffer.allocate(1), 0));
        }
    }
}
