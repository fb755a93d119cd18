package org.fanstore.bench;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.fanstore.prep.format.Manifest;
import org.fanstore.prep.format.TableInfo;
import org.fanstore.prep.format.table.MetadataTable;
import org.fanstore.prep.format.table.MetadataTableDescriptor;
import org.fanstore.prep.format.table.TableChecksum;
import org.fanstore.prep.format.table.TableMapping;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The streamed synthetic table is the one prep's writer builds from the same partitions, byte for byte. */
class SyntheticDatasetTest {
    @TempDir
    Path dir;

    private void sameAsPrep(final String name, final long files, final int partitions, final long dirs)
        throws Exception {
        final Path streamed = dir.resolve(name + "-streamed.fs");
        final Path prep = dir.resolve(name + "-prep.fs");
        final byte[] nameBytes = name.getBytes(US_ASCII);
        final Manifest a = SyntheticDataset.write(streamed, nameBytes, files, partitions, dirs, true);
        final Manifest b = SyntheticDataset.write(prep, nameBytes, files, partitions, dirs, false);
        final byte[] want = Files.readAllBytes(prep.resolve(TableInfo.FILE_NAME));
        final byte[] got = Files.readAllBytes(streamed.resolve(TableInfo.FILE_NAME));
        final int header = MetadataTableDescriptor.HEADER_LENGTH;
        assertEquals(-1, java.util.Arrays.mismatch(want, header, want.length, got, header, got.length),
            name + ": the streamed table differs after the header at (offset - 160)");
        assertArrayEquals(want, got, name + ": the streamed table's header differs");
        assertEquals(b.toText(), a.toText());
        assertEquals(Files.readString(prep.resolve("manifest.txt")),
            Files.readString(streamed.resolve("manifest.txt")));
        // the Java reader's full validation (every entry, child range, bucket) and its lookups
        try (MetadataTable t = MetadataTable.openDataset(streamed.resolve(TableInfo.FILE_NAME))) {
            assertEquals(3 + dirs + files, t.entryCount());
            final long lastDir = dirs - 1;
            final byte[] last = (name + "/" + new String(SyntheticDataset.filePath(lastDir, files - 1), US_ASCII))
                .getBytes(US_ASCII);
            assertEquals(3 + dirs + files - 1, t.lookup(last), "the last file's entry");
            assertEquals(3, t.lookup((name + "/train/n00000000").getBytes(US_ASCII)));
            assertTrue(t.lookup((name + "/train/n00000000/n00000000_99999999.JPEG").getBytes(US_ASCII)) < 0);
        }
        try (var ch = java.nio.channels.FileChannel.open(streamed.resolve(TableInfo.FILE_NAME));
             TableMapping m = TableMapping.map(ch, java.nio.channels.FileChannel.MapMode.READ_ONLY, ch.size())) {
            assertEquals(a.table().crc32c(), TableChecksum.of(m, ch.size()));
        }
    }

    @Test
    void theStreamedTableIsPrepsTableByteForByte() throws Exception {
        sameAsPrep("synth", 5000, 3, 7);
    }

    @Test
    void namesThatExtendTheirParentsAndEmptyDirectoriesStayIdentical() throws Exception {
        // "tr" is a prefix of "train": train/ stores "ain"; 12 directories for 9 files: three are empty
        sameAsPrep("tr", 9, 4, 12);
        // ImageNet's default shape, 1,300 files per directory, one partition
        sameAsPrep("in1k", 2700, 1, 3);
    }
}
