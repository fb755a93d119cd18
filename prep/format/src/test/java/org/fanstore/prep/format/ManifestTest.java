package org.fanstore.prep.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestTest {
    @TempDir
    Path tmp;

    private static Manifest sample() {
        return new Manifest(new byte[] {'i', 'm', 'g', ' ', (byte)0xFF}, 3, 2, 1, 1000, 600, Compression.LZ4HC,
            List.of("val".getBytes(StandardCharsets.US_ASCII)),
            List.of(new PartitionInfo(0, "part-00000.fsp", 4200, 0xDEADBEEF, 4, false),
                new PartitionInfo(0, "bcast-00000.fsp", 4100, 0x0000000A, 2, true)));
    }

    @Test
    void writesTheSpecifiedTextAndReadsItBack() throws IOException {
        sample().write(tmp);
        final String text = Files.readString(tmp.resolve(Manifest.FILE_NAME));
        assertEquals("""
            fanstore-manifest 1
            name img%20%FF
            files 3
            dirs 2
            symlinks 1
            raw_bytes 1000
            stored_bytes 600
            compress lz4hc
            partitions 1
            broadcast_partitions 1
            broadcast_dir val
            partition 0 part-00000.fsp 4200 deadbeef 4 regular
            partition 0 bcast-00000.fsp 4100 0000000a 2 broadcast
            """, text);
        final Manifest read = Manifest.read(tmp);
        assertArrayEquals(sample().nameBytes(), read.nameBytes());
        assertEquals(sample().partitions(), read.partitions());
        assertEquals(Compression.LZ4HC, read.compress());
        assertEquals(text, read.toText());
    }

    @Test
    void aBadRecordIsReportedWithFileAndLine() throws IOException {
        final String text = sample().toText().replace("raw_bytes 1000", "raw_bytes lots");
        Files.writeString(tmp.resolve(Manifest.FILE_NAME), "# comment\n" + text);
        final BadManifestException e = assertThrows(BadManifestException.class, () -> Manifest.read(tmp));
        assertTrue(e.getMessage().contains(tmp.resolve(Manifest.FILE_NAME) + ":7:"), e.getMessage());
        assertTrue(e.getMessage().contains("'lots'"), e.getMessage());
    }

    @Test
    void aMissingPartitionLineIsReported() throws IOException {
        final String text = sample().toText().replaceAll("partition 0 bcast.*\n", "");
        Files.writeString(tmp.resolve(Manifest.FILE_NAME), text);
        final BadManifestException e = assertThrows(BadManifestException.class, () -> Manifest.read(tmp));
        assertTrue(e.getMessage().contains("0 broadcast partition lines"), e.getMessage());
    }
}
