package org.fanstore.prep;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.fanstore.prep.format.Compression;
import org.fanstore.prep.format.PartitionDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReadBatchTest {
    @TempDir
    Path tmp;

    private SourceEntry file(final String name, final long size) {
        return new SourceEntry(name.getBytes(StandardCharsets.US_ASCII), PartitionDescriptor.TYPE_FILE, 0100644, 0, 0,
            0, 0, size, null);
    }

    @Test
    void eachSlotGetsItsOwnFileAndAFailureIsReportedForTheFileThatFailed() throws Exception {
        Files.writeString(tmp.resolve("a"), "first");
        Files.writeString(tmp.resolve("c"), "third");
        final SourceEntry[] files = {file("a", 5), null, file("b-gone", 4), file("c", 5)};
        final ReadBatch batch = new ReadBatch(new BodyEncoder(Compression.NONE, SourceFiles.local(tmp)), 10, files);
        final ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            batch.submitTo(pool);
            final BodyEncoder.EncodedBody a = batch.take(10);
            assertEquals(5, a.rawLength());
            assertArrayEquals("first".getBytes(StandardCharsets.US_ASCII), Arrays.copyOf(a.stored(), a.storedLength()));
            final NoSuchFileException gone = assertThrows(NoSuchFileException.class, () -> batch.take(12));
            assertEquals(tmp.resolve("b-gone").toString(), gone.getFile());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aFileIsReadUpToTheSizeTheWalkSaw() throws Exception {
        Files.writeString(tmp.resolve("grew"), "walked+appended");
        final ReadBatch batch = new ReadBatch(new BodyEncoder(Compression.NONE, SourceFiles.local(tmp)), 0,
            new SourceEntry[] {file("grew", 6)});
        final ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            batch.submitTo(pool);
            final BodyEncoder.EncodedBody body = batch.take(0);
            assertEquals(6, body.rawLength());
            assertArrayEquals("walked".getBytes(StandardCharsets.US_ASCII),
                Arrays.copyOf(body.stored(), body.storedLength()));
        } finally {
            pool.shutdownNow();
        }
    }
}
