package org.fanstore.prep.format.table;

import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The windowed mapping behind every table reader and writer in Java: values read and written at every offset near a
 * window boundary equal what a plain read of the file gives, bulk copies cross windows, and a sparse file past 4 GiB
 * reads right at the 2 GiB and 4 GiB boundaries (where an int offset would wrap).
 */
class TableMappingTest {
    private static final int SHIFT = 12;
    private static final int STRIDE = 1 << SHIFT;

    @TempDir
    Path dir;

    @Test
    void everyAccessNearAWindowBoundaryReadsTheFilesBytes() throws IOException {
        final byte[] bytes = new byte[7 * STRIDE + 123];
        new Random(44).nextBytes(bytes);
        final Path file = dir.resolve("t");
        Files.write(file, bytes);
        final ByteBuffer want = ByteBuffer.wrap(bytes).order(LITTLE_ENDIAN);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
             TableMapping m = TableMapping.map(ch, FileChannel.MapMode.READ_ONLY, bytes.length, SHIFT)) {
            assertEquals(bytes.length, m.length());
            for (long w = 1; w <= 7; w++) {
                for (long at = w * STRIDE - 9; at <= w * STRIDE + 1 && at + 8 <= bytes.length; at++) {
                    assertEquals(want.getLong((int)at), m.getLong(at), "long at " + at);
                    assertEquals(want.getInt((int)at), m.getInt(at), "int at " + at);
                    assertEquals(bytes[(int)at], m.getByte(at), "byte at " + at);
                }
            }
            final byte[] across = new byte[3 * STRIDE + 17];
            m.getBytes(STRIDE - 5, across);
            final byte[] expected = java.util.Arrays.copyOfRange(bytes, STRIDE - 5, STRIDE - 5 + across.length);
            assertArrayEquals(expected, across, "getBytes across three windows");
            assertTrue(m.bytesEqual(STRIDE - 5, expected), "bytesEqual across windows");
            expected[expected.length - 1] ^= 1;
            assertFalse(m.bytesEqual(STRIDE - 5, expected), "one byte differs at the end");
            final byte[] key = java.util.Arrays.copyOfRange(bytes, 2 * STRIDE - 3, 2 * STRIDE + 13);
            assertTrue(m.bytesEqual(2 * STRIDE - 3, key), "a key straddling a stride boundary, in one window");
            key[0] ^= 1;
            assertFalse(m.bytesEqual(2 * STRIDE - 3, key));
            final ByteBuffer piece = m.piece(STRIDE + 100, 10 * STRIDE);
            assertTrue(piece.remaining() >= STRIDE, "a piece holds at least one stride: " + piece.remaining());
            assertEquals(bytes[STRIDE + 100], piece.get(0));
            assertEquals(STRIDE, m.piece(3 * STRIDE - 1, STRIDE).remaining(), "one stride is always whole");
            assertEquals(23, m.piece(bytes.length - 23, STRIDE).remaining(), "up to the end");
        }
    }

    @Test
    void writesAcrossWindowsLandWhereAPlainReadFindsThem() throws IOException {
        final Path file = dir.resolve("w");
        final int length = 5 * STRIDE + 7;
        final byte[] data = new byte[2 * STRIDE + 50];
        new Random(7).nextBytes(data);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
            StandardOpenOption.WRITE)) {
            try (TableMapping m = TableMapping.map(ch, FileChannel.MapMode.READ_WRITE, length, SHIFT)) {
                m.putBytes(STRIDE - 25, ByteBuffer.wrap(data));
                m.putLong(4L * STRIDE - 4, 0x0102030405060708L);
                m.putInt(3L * STRIDE - 2, 0xa0b0c0d0);
                m.putBytes(5L * STRIDE - 3, new byte[] {9, 9, 9, 9, 9, 9});
                m.setMemory(STRIDE - 25, 10, (byte)0);
                m.force();
            }
        }
        final ByteBuffer got = ByteBuffer.wrap(Files.readAllBytes(file)).order(LITTLE_ENDIAN);
        assertEquals(length, got.capacity());
        for (int i = 0; i < data.length; i++) {
            final int at = STRIDE - 25 + i;
            if (at == 3 * STRIDE - 2) {
                break;   // overwritten by the putInt below
            }
            assertEquals(i < 10 ? 0 : data[i], got.get(at), "byte " + at);
        }
        assertEquals(0x0102030405060708L, got.getLong(4 * STRIDE - 4));
        assertEquals(0xa0b0c0d0, got.getInt(3 * STRIDE - 2));
        assertEquals(9, got.get(5 * STRIDE + 2));
    }

    @Test
    void aSparseFilePastFourGibReadsRightAtTheTwoAndFourGibOffsets() throws IOException {
        final Path file = dir.resolve("sparse");
        final long length = (4L << 30) + 4096;
        final long[] at = {(2L << 30) - 4, (2L << 30) + 8, (4L << 30) - 4, (4L << 30) + 100, length - 8};
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
            StandardOpenOption.WRITE, StandardOpenOption.SPARSE)) {
            for (int i = 0; i < at.length; i++) {
                ch.write(ByteBuffer.allocate(8).order(LITTLE_ENDIAN).putLong(0, 0x1111111111111111L * (i + 1)),
                    at[i]);
            }
            assertEquals(length, ch.size());
            try (TableMapping m = TableMapping.map(ch, FileChannel.MapMode.READ_ONLY, length)) {
                for (int i = 0; i < at.length; i++) {
                    assertEquals(0x1111111111111111L * (i + 1), m.getLong(at[i]), "at " + at[i]);
                }
                assertEquals(0, m.getLong(3L << 30), "a hole reads as zeros");
                final byte[] two = new byte[16];
                m.getBytes((2L << 30) - 4, two);
                assertEquals(0x11, two[0]);
                assertEquals(0, two[8]);
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
