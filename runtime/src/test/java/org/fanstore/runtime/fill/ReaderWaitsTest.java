package org.fanstore.runtime.fill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.zip.CRC32C;
import org.fanstore.prep.DatasetPacker;
import org.fanstore.prep.PrepOptions;
import org.fanstore.prep.PrepProgress;
import org.fanstore.prep.format.Compression;
import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.table.LandedTable;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.runtime.fill.source.RangeSource;
import org.fanstore.runtime.placement.BodyCheck;
import org.fanstore.runtime.placement.BodyIndex;
import org.fanstore.runtime.placement.LocalPartitions;
import org.fanstore.runtime.placement.Placement;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reader's wait for ranges holds no thread (README.md, "A reader's wait holds no thread"): a real {@link Fill} of a
 * real packed dataset, 1 rank, whose home serves nothing until the test opens its gate (one partition's; the other
 * stays shut, so the fill never ends during a case). {@link Fill#whenBytes} returns
 * before the bytes are there; the fill's driver answers when they landed (with the right bytes), at the deadline
 * (null), or when the fill stops (null). No timing is asserted: each case waits for an event, bounded.
 */
class ReaderWaitsTest {
    private static final long BOUND_S = 60;

    @TempDir
    Path root;
    /** Opens the home for the partition of the entry under test; the other partition's stays shut until the end. */
    private final CountDownLatch gate = new CountDownLatch(1);
    /** The other partition: while it cannot land the fill cannot end, so no wait is answered by its end. */
    private final CountDownLatch others = new CountDownLatch(1);
    private volatile int target = -1;
    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private MetadataTable table;
    private LocalPartitions local;
    private BodyIndex bodies;
    private Fill fill;

    @AfterEach
    void close() throws IOException {
        gate.countDown();
        others.countDown();
        if (fill != null) {
            fill.close();
        }
        if (table != null) {
            table.close();
        }
        if (local != null) {
            local.close();
        }
    }

    @Test
    void aWaitHoldsNoThreadAndIsAnsweredWithItsBytesWhenTheyLand() throws Exception {
        int entry = start(System::nanoTime);
        CompletableFuture<FileChannel> got = new CompletableFuture<>();
        CompletableFuture<String> on = new CompletableFuture<>();
        fill.whenBytes(bodies.partition(entry), bodies.bodyOffset(entry), bodies.storedLength(entry),
                System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_S), c -> {
                    on.complete(Thread.currentThread().getName());
                    got.complete(c);
                });
        assertFalse(got.isDone(), "answered before the home gave a byte");
        gate.countDown();
        FileChannel c = got.get(BOUND_S, TimeUnit.SECONDS);
        assertNotNull(c, "the ranges landed but the reader was told to read the sources");
        assertEquals("fanstore-fill", on.get(), "answered elsewhere than by the fill's driver");
        assertEquals(bodies.crc32c(entry), crc(c, bodies.bodyOffset(entry), bodies.storedLength(entry)));
        // once landed, a wait is answered at once, on the caller's thread
        CompletableFuture<String> again = new CompletableFuture<>();
        fill.whenBytes(bodies.partition(entry), bodies.bodyOffset(entry), bodies.storedLength(entry),
                System.nanoTime(), ch -> again.complete(ch == null ? "null" : Thread.currentThread().getName()));
        assertEquals(Thread.currentThread().getName(), again.getNow("not answered at once"));
    }

    @Test
    void aWaitEndsAtItsDeadlineWithoutItsBytes() throws Exception {
        int entry = start(clock::get);
        CompletableFuture<FileChannel> got = new CompletableFuture<>();
        fill.whenBytes(bodies.partition(entry), bodies.bodyOffset(entry), bodies.storedLength(entry),
                clock.get() + 1_000, got::complete);
        assertFalse(got.isDone(), "answered before its deadline, with no byte landed");
        clock.addAndGet(2_000);
        assertNull(got.get(BOUND_S, TimeUnit.SECONDS), "a channel without the bytes");
    }

    @Test
    void aWaitIsAnsweredWhenTheFillStops() throws Exception {
        int entry = start(System::nanoTime);
        CompletableFuture<FileChannel> got = new CompletableFuture<>();
        fill.whenBytes(bodies.partition(entry), bodies.bodyOffset(entry), bodies.storedLength(entry),
                Long.MAX_VALUE, got::complete);
        assertFalse(got.isDone());
        Thread closing = new Thread(fill::close, "closing");
        closing.start();
        assertNull(got.get(BOUND_S, TimeUnit.SECONDS), "a channel without the bytes");
        gate.countDown();
        closing.join(TimeUnit.SECONDS.toMillis(BOUND_S));
        assertFalse(closing.isAlive());
    }

    /** Packs two 1.5 MiB files (several ranges each), starts a fill of them; returns the entry of the first. */
    private int start(LongSupplier now) throws Exception {
        Path src = Files.createDirectories(root.resolve("src/ds"));
        Random rnd = new Random(45);
        for (int i = 0; i < 2; i++) {
            byte[] body = new byte[3 * Fill.RANGE_BYTES + 1000 * i];
            rnd.nextBytes(body);
            Files.write(src.resolve("f" + i), body);
        }
        Path data = root.resolve("ds.fs");
        DatasetPacker.prep(new PrepOptions(src, data, null, 2, Compression.NONE, List.of(), 1, null, false, false),
                PrepProgress.silent(), line -> { });
        Manifest manifest = Manifest.read(data);
        Path parts = Files.createDirectories(root.resolve("local/parts"));
        Path files = Files.createDirectories(root.resolve("local/files"));
        Path landed = root.resolve("meta.table");
        LandedTable.copy(data.resolve(manifest.table().fileName()), landed, manifest.table().crc32c(), 0, 1, 0,
                files.toString().getBytes(StandardCharsets.UTF_8), 1);
        table = MetadataTable.open(landed);
        bodies = new BodyIndex(table);
        local = new LocalPartitions();
        local.attach(bodies);
        BodyCheck check = new BodyCheck(table, bodies, local, 0, data.toString());
        local.attach(check);
        KeepPlan plan = KeepPlan.of(manifest.regularPartitions(), manifest.broadcastPartitions(),
                new Placement(1, 0), 0, Long.MAX_VALUE / 4, false);
        RangeSource home = new GatedHome(data, manifest);
        fill = new Fill(plan, new Governor(Governor.Config.fromProperties(), now), Map.of(FillScheduler.HOME, home),
                local, parts, bodies, check, Long.MAX_VALUE / 4, 0, false, root.resolve("prefetched"));
        local.attach(fill);
        int entry = table.lookup("ds/f0".getBytes(StandardCharsets.UTF_8));
        assertTrue(entry >= 0 && bodies.partition(entry) != BodyIndex.NO_BODY, "no body for ds/f0");
        assertNotEquals(0, bodies.storedLength(entry));
        target = bodies.partition(entry);
        fill.start();
        return entry;
    }

    private static int crc(FileChannel c, long offset, long length) throws IOException {
        ByteBuffer b = ByteBuffer.allocate((int) length);
        while (b.hasRemaining()) {
            if (c.read(b, offset + b.position()) <= 0) {
                throw new IOException("the channel ends early");
            }
        }
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, b.position());
        return (int) crc.getValue();
    }

    /** The dataset's partition files, served only once the test opened the gate. */
    private final class GatedHome implements RangeSource {
        private final Path data;
        private final Manifest manifest;

        GatedHome(Path data, Manifest manifest) {
            this.data = data;
            this.manifest = manifest;
        }

        @Override
        public String kind() {
            return "sharedfs";
        }

        @Override
        public void read(int p, long position, long length, WritableByteChannel sink, boolean forReader)
                throws IOException {
            try {
                if (!(p == target ? gate : others).await(BOUND_S, TimeUnit.SECONDS)) {
                    throw new IOException("the test never opened the gate");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted");
            }
            Path file = data.resolve(manifest.regularPartitions().get(p).fileName());
            try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
                long done = 0;
                while (done < length) {
                    long n = in.transferTo(position + done, length - done, sink);
                    if (n <= 0) {
                        throw new IOException(file + " ends early");
                    }
                    done += n;
                }
            }
        }
    }
}
