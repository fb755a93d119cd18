package org.fanstore.prep.format;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.fanstore.prep.format.PartitionDescriptor.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The golden dataset in tests/vectors/partition: the writer still produces it byte for byte, and the reader
 * parses it to exactly the entries of the fixed tree. The C side (interpose-native/tests/test_partition_format.c)
 * checks the same files. Run with -Dfanstore.regenerateVectors=true to rewrite them after a deliberate change.
 */
class PartitionVectorsTest {
    static Path vectorDir() {
        return TestVectors.dir("partition");
    }

    @Test
    void writerReproducesCommittedVectors(@TempDir final Path temp) throws IOException {
        TestVectors.assertReproduced(vectorDir(), temp, PartitionVectors.writeAll(temp), "format drift");
    }

    @Test
    void readerParsesTheGoldenPartitionToTheFixedTree() throws IOException {
        final List<PartitionVectors.Expected> expected = PartitionVectors.expected();
        final List<PartitionVectors.Node> tree = PartitionVectors.tree();
        try (PartitionReader reader = PartitionReader.open(vectorDir().resolve(PartitionVectors.PARTITION))) {
            assertEquals(0, reader.index());
            assertFalse(reader.isBroadcast());
            assertEquals(DATA_ALIGNMENT, reader.dataOffset());
            assertEquals(expected.stream().map(PartitionVectors.Expected::entry).toList(), reader.entries());
            for (int i = 0; i < tree.size(); i++) {
                final PartitionEntry e = reader.entries().get(i);
                if (!e.isDir()) {
                    assertArrayEquals(tree.get(i).content(), reader.readRaw(e), e.pathString());
                    assertArrayEquals(expected.get(i).stored(), reader.readStored(e), e.pathString());
                }
            }
            final List<String> kinds = reader.entries().stream()
                .map(e -> e.type() + "/" + e.codec() + "/" + e.rawLength()).toList();
            assertTrue(kinds.contains(TYPE_FILE + "/" + CODEC_RAW + "/0"), "an empty file: " + kinds);
            assertTrue(kinds.contains(TYPE_FILE + "/" + CODEC_LZ4_CHUNKED + "/3000"), "an LZ4 file: " + kinds);
            assertTrue(kinds.stream().anyMatch(k -> k.startsWith(TYPE_SYMLINK + "/")), "a symlink: " + kinds);
        }
    }

    @Test
    void manifestDescribesTheGoldenPartition() throws IOException {
        final Manifest manifest = Manifest.read(vectorDir());
        assertEquals("golden", manifest.name());
        assertEquals(List.of(4L, 4L, 1L, 3021L), List.of(manifest.files(), manifest.dirs(), manifest.symlinks(),
            manifest.rawBytes()));
        assertEquals(Compression.LZ4, manifest.compress());
        final byte[] file = Files.readAllBytes(vectorDir().resolve(PartitionVectors.PARTITION));
        final CRC32C crc = new CRC32C();
        crc.update(file);
        assertEquals(List.of(new PartitionInfo(0, PartitionVectors.PARTITION, file.length, (int)crc.getValue(), 9,
            false)), manifest.partitions());
    }

    @Test
    void theVersionWordCarriesTheStructureSizes() throws IOException {
        assertEquals(0x00403802, FORMAT_VERSION, "revision 2, entry fixed length 56, header length 64");
        assertEquals(FORMAT_VERSION, versionWord(LAYOUT_REVISION, HEADER_LENGTH, ENTRY_FIXED_LENGTH));
        final byte[] file = Files.readAllBytes(vectorDir().resolve(PartitionVectors.PARTITION));
        assertEquals(FORMAT_VERSION, ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN).getInt(VERSION_OFFSET));
        assertTrue(Files.readString(vectorDir().resolve(PartitionVectors.EXPECT), US_ASCII)
            .contains("header version=" + Integer.toHexString(FORMAT_VERSION) + " "));
    }

    /** What a writer whose entry or header had another size (or the old version 1) would have written. */
    @Test
    void aPartitionOfAnotherLayoutIsRefused(@TempDir final Path temp) throws IOException {
        final byte[] golden = Files.readAllBytes(vectorDir().resolve(PartitionVectors.PARTITION));
        final int[] others = {versionWord(LAYOUT_REVISION, HEADER_LENGTH, ENTRY_FIXED_LENGTH + 4),
            versionWord(LAYOUT_REVISION, HEADER_LENGTH + 8, ENTRY_FIXED_LENGTH), 1};
        for (final int version : others) {
            final ByteBuffer patched = ByteBuffer.wrap(golden.clone()).order(ByteOrder.LITTLE_ENDIAN);
            patched.putInt(VERSION_OFFSET, version);
            final CRC32C crc = new CRC32C();
            crc.update(patched.array(), 0, HEADER_CRC_OFFSET);
            patched.putInt(HEADER_CRC_OFFSET, (int)crc.getValue());
            final Path file = temp.resolve(Integer.toHexString(version) + ".fsp");
            Files.write(file, patched.array());
            final CorruptPartitionException e = assertThrows(CorruptPartitionException.class,
                () -> PartitionReader.open(file).close());
            assertTrue(e.getMessage().contains("format version 0x" + Integer.toHexString(version)), e.getMessage());
        }
    }
}
