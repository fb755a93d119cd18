package org.fanstore.prep.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Random;

import org.fanstore.prep.DatasetPacker;
import org.fanstore.prep.PrepOptions;
import org.fanstore.prep.PrepProgress;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DatasetVerifierTest {
    @TempDir
    Path tmp;

    private Path dataset;

    @BeforeEach
    void prepTwoPartitions() throws Exception {
        final Path src = Files.createDirectories(tmp.resolve("src/d"));
        final Random random = new Random(1);
        for (int i = 0; i < 6; i++) {
            final byte[] bytes = new byte[5000 + i * 1000];
            random.nextBytes(bytes);
            Files.write(src.resolve("file" + i), bytes);
        }
        dataset = DatasetPacker.prep(new PrepOptions(tmp.resolve("src"), tmp.resolve("out.fs"), null, 2,
            Compression.NONE, List.of(), 1, null, false, false), PrepProgress.silent(), w -> { }).output();
        assertTrue(DatasetVerifier.verify(dataset).ok());
    }

    @Test
    void aBitFlipInABodyNamesThePartitionAndTheFile() throws IOException {
        final Path partition = dataset.resolve("part-00001.fsp");
        final PartitionEntry victim;
        try (PartitionReader reader = PartitionReader.open(partition)) {
            victim = reader.entries().stream().filter(PartitionEntry::isFile).findFirst().orElseThrow();
        }
        flipBit(partition, victim.bodyOffset() + 10);

        final DatasetVerifier.Report report = DatasetVerifier.verify(dataset);
        assertTrue(report.faults().stream().anyMatch(f -> f.partition().equals("part-00001.fsp") &&
            victim.pathString().equals(f.path()) && f.problem().contains("CRC32C")), report.faults().toString());
        assertTrue(report.faults().stream().anyMatch(f -> f.problem().contains("whole-file CRC32C")));
        try (PartitionReader reader = PartitionReader.open(partition)) {
            final CorruptPartitionException e = assertThrows(CorruptPartitionException.class,
                () -> reader.readRaw(victim));
            assertTrue(e.getMessage().contains(partition.toString()) && e.getMessage().contains(victim.pathString()));
        }
    }

    @Test
    void aBitFlipInTheTableIsCaughtByItsCrc() throws IOException {
        final Path partition = dataset.resolve("part-00000.fsp");
        flipBit(partition, PartitionDescriptor.HEADER_LENGTH + 6);
        final CorruptPartitionException e = assertThrows(CorruptPartitionException.class,
            () -> PartitionReader.open(partition));
        assertTrue(e.getMessage().contains("table CRC32C"), e.getMessage());
        final DatasetVerifier.Report report = DatasetVerifier.verify(dataset);
        assertTrue(report.faults().stream().anyMatch(f -> "part-00000.fsp".equals(f.partition()) &&
            f.problem().contains("table CRC32C")), report.faults().toString());
    }

    @Test
    void aTruncatedPartitionIsReportedByNameWithTheFileItCut() throws IOException {
        final Path partition = dataset.resolve("part-00001.fsp");
        final PartitionEntry last;
        try (PartitionReader reader = PartitionReader.open(partition)) {
            last = reader.entries().get(reader.entries().size() - 1);
        }
        try (FileChannel channel = FileChannel.open(partition, StandardOpenOption.WRITE)) {
            channel.truncate(Files.size(partition) - 100);
        }
        final DatasetVerifier.Report report = DatasetVerifier.verify(dataset);
        assertTrue(report.faults().stream().anyMatch(f -> "part-00001.fsp".equals(f.partition()) &&
            f.problem().contains("truncated")), report.faults().toString());
        assertTrue(report.faults().stream().anyMatch(f -> last.pathString().equals(f.path())),
            report.faults().toString());
        assertEquals(false, report.ok());
    }

    @Test
    void aMissingPartitionIsReported() throws IOException {
        Files.delete(dataset.resolve("part-00000.fsp"));
        final DatasetVerifier.Report report = DatasetVerifier.verify(dataset);
        assertTrue(report.faults().stream().anyMatch(f -> "part-00000.fsp".equals(f.partition()) &&
            f.problem().contains("missing")), report.faults().toString());
    }

    static void flipBit(final Path file, final long offset) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            final ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, offset);
            one.put(0, (byte)(one.get(0) ^ 0x10)).rewind();
            channel.write(one, offset);
        }
    }
}
