package org.fanstore.runtime.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Shared futexes over a MAP_SHARED file. Two separate mappings of one file stand in for two processes: the
 * kernel must key the word by file and offset, not by address (the C clients prove the cross-process case in
 * ShmServerTest).
 */
class FutexTest {
    private Path dir;
    private MappedByteBuffer first;
    private MappedByteBuffer second;

    @BeforeEach
    void mapTwice() throws Exception {
        dir = ShmTestSupport.shmTempDir();
        final Path file = dir.resolve("futex");
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
            StandardOpenOption.WRITE)) {
            first = channel.map(FileChannel.MapMode.READ_WRITE, 0, 4096);
            second = channel.map(FileChannel.MapMode.READ_WRITE, 0, 4096);
        }
    }

    @AfterEach
    void unmap() throws Exception {
        try {
            IoUtil.unmap(first);
            IoUtil.unmap(second);
        } finally {
            ShmTestSupport.deleteTree(dir);
        }
    }

    @Test
    void waitTimesOutWhenNobodyWakes() {
        final long address = new UnsafeBuffer(first).addressOffset();
        final long start = System.nanoTime();
        assertEquals(Futex.ETIMEDOUT, Futex.wait(address, 0, TimeUnit.MILLISECONDS.toNanos(50)));
        final long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(elapsedMillis >= 45 && elapsedMillis < 2_000, "waited " + elapsedMillis + " ms");
    }

    @Test
    void waitReturnsAtOnceWhenTheWordChanged() {
        final UnsafeBuffer buffer = new UnsafeBuffer(first);
        buffer.putIntVolatile(0, 7);
        assertEquals(Futex.EAGAIN, Futex.wait(buffer.addressOffset(), 6, TimeUnit.SECONDS.toNanos(5)));
    }

    @Test
    void wakeThroughOneMappingReachesAWaiterOnTheOther() throws Exception {
        final UnsafeBuffer waiterView = new UnsafeBuffer(first);
        final UnsafeBuffer wakerView = new UnsafeBuffer(second);
        final CompletableFuture<Integer> waiter = CompletableFuture.supplyAsync(
            () -> Futex.wait(waiterView.addressOffset(), 0, TimeUnit.SECONDS.toNanos(10)));
        int woken = 0;
        final long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (woken == 0 && System.nanoTime() < end) {
            Thread.sleep(10);  // until the waiter is asleep in the kernel
            wakerView.putIntVolatile(0, 1);
            woken = Futex.wake(wakerView.addressOffset(), 1);
            wakerView.putIntVolatile(0, 0);
        }
        assertEquals(1, woken);
        assertEquals(Futex.WOKEN, waiter.get(5, TimeUnit.SECONDS));
    }
}
