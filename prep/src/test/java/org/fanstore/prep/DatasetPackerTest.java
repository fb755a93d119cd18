package org.fanstore.prep;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.fanstore.prep.format.Compression;
import org.fanstore.prep.format.Dataset;
import org.fanstore.prep.format.DatasetVerifier;
import org.fanstore.prep.format.PartitionDescriptor;
import org.fanstore.prep.format.PartitionEntry;
import org.fanstore.prep.format.PartitionInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class DatasetPackerTest {
    @TempDir
    Path tmp;

    private final List<String> warnings = new ArrayList<>();

    private PrepResult prep(final Path input, final Path output, final Compression compress, final int threads,
        final String... broadcast) throws Exception {
        return DatasetPacker.prep(new PrepOptions(input, output, null, 3, compress, List.of(broadcast), threads,
            null, false, false), PrepProgress.silent(), warnings::add);
    }

    /** 512 permission sets x 129 owners: one (mode, uid, gid) past the 65,536 a table holds: one line, no trace. */
    @Test
    void aNamespaceWithMoreOwnerAndModeKindsThanATableHoldsIsOneUserLine() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
            "needs root to give files other owners");
        final Path src = tmp.resolve("kinds");
        final java.nio.file.attribute.PosixFilePermission[] bits =
            java.nio.file.attribute.PosixFilePermission.values();
        for (int uid = 0; uid < 129; uid++) {
            final Path dir = Files.createDirectories(src.resolve("u" + uid));
            for (int m = 0; m < 512; m++) {
                final Path f = Files.createFile(dir.resolve("m" + m));
                final java.util.Set<java.nio.file.attribute.PosixFilePermission> perms =
                    java.util.EnumSet.noneOf(java.nio.file.attribute.PosixFilePermission.class);
                for (int b = 0; b < 9; b++) {
                    if ((m & (1 << b)) != 0) {
                        perms.add(bits[b]);
                    }
                }
                Files.setPosixFilePermissions(f, perms);
                Files.setAttribute(f, "unix:uid", 100_000 + uid);
            }
        }
        final PrepException e = assertThrows(PrepException.class, () -> DatasetPacker.prep(new PrepOptions(src,
            tmp.resolve("kinds.fs"), null, 2, Compression.NONE, List.of(), 2, null, false, false),
            PrepProgress.silent(), warnings::add));
        assertTrue(e.getMessage().contains("more than 65536 distinct (mode, uid, gid)")
            && e.getMessage().contains("--input " + src) && !e.getMessage().contains("Exception"), e.getMessage());
        assertFalse(Files.exists(tmp.resolve("kinds.fs")), "nothing that looks like a dataset is left");
    }

    @Test
    void theListingAndTheTableAreSaidWhenTheyBeginAndEnd() throws Exception {
        final Path src = tmp.resolve("src");
        for (int i = 0; i < 5; i++) {
            Files.createDirectories(src.resolve("d" + i % 2));
            Files.write(src.resolve("d" + i % 2 + "/f" + i), new byte[] {(byte)i});
        }
        final List<String> said = new ArrayList<>();
        final PrepProgress recording = new PrepProgress() {
            @Override
            public void start(final long files, final long bytes) {
                said.add("start " + files);
            }

            @Override
            public void advance(final long bytes) {
            }

            @Override
            public void phase(final String line) {
                said.add(line);
            }

            @Override
            public void close() {
            }
        };
        DatasetPacker.prep(new PrepOptions(src, tmp.resolve("p.fs"), null, 2, Compression.NONE, List.of(), 1, null,
            false, false), recording, warnings::add);
        // 5 files, 2 directories and the root: 8 entries
        assertEquals(5, said.size(), said.toString());
        assertTrue(said.get(0).startsWith("listing " + src), said.toString());
        assertTrue(said.get(1).matches("listed 8 entries in [0-9.]+ s"), said.toString());
        assertEquals("start 5", said.get(2));
        assertEquals("metadata table for 8 entries ...", said.get(3));
        assertTrue(said.get(4).matches("metadata table [0-9.]+ MiB \\([0-9.]+ bytes/file\\) in [0-9.]+ s"),
            said.toString());
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void everyFileReadsBackByteForByte(final Compression compress) throws Exception {
        final Path src = SourceTrees.awkwardTree(tmp.resolve("src"));
        final PrepResult result = prep(src, tmp.resolve("out.fs"), compress, 2, "val/");

        assertTrue(warnings.stream().anyMatch(w -> w.contains("FIFO") && w.contains("a-fifo")), warnings.toString());
        assertTrue(DatasetVerifier.verify(result.output()).ok());
        int files = 0;
        try (Dataset dataset = Dataset.open(result.output()); Stream<Path> walk = Files.walk(src)) {
            for (final Path source : (Iterable<Path>)walk::iterator) {
                final byte[] path = NativePaths.bytesOf(src.relativize(source));
                final Dataset.Located found = dataset.lookup(path).orElse(null);
                if (Files.isSymbolicLink(source)) {
                    assertNotNull(found, source.toString());
                    assertArrayEquals(NativePaths.bytesOf(Files.readSymbolicLink(source)), dataset.read(found));
                } else if (Files.isRegularFile(source, LinkOption.NOFOLLOW_LINKS)) {
                    assertArrayEquals(Files.readAllBytes(source), dataset.read(found), source.toString());
                    files++;
                } else if (Files.isDirectory(source, LinkOption.NOFOLLOW_LINKS)) {
                    assertTrue(found.entry().isDir());
                } else {
                    assertTrue(found == null, "special file was packed: " + source);
                }
            }
            assertEquals(files, result.manifest().files());
            final PartitionEntry nonUtf8 = dataset.lookup(SourceTrees.NON_UTF8_NAME).orElseThrow().entry();
            assertArrayEquals("latin-1 name".getBytes(StandardCharsets.UTF_8),
                dataset.read(dataset.lookup(nonUtf8.path()).orElseThrow()));
            assertTrue(dataset.lookup("empty/nested-empty".getBytes(StandardCharsets.UTF_8)).orElseThrow()
                .entry().isDir());
            final Dataset.Located viaLink = dataset.resolve("val/link-to-big".getBytes(StandardCharsets.UTF_8))
                .orElseThrow();
            assertArrayEquals(Files.readAllBytes(src.resolve("train/big.csv")), dataset.read(viaLink));
            final Dataset.Located bcast = dataset.lookup("val/v0.txt".getBytes(StandardCharsets.UTF_8)).orElseThrow();
            assertTrue(bcast.partition().isBroadcast());
        }
        if (compress != Compression.NONE) {
            assertTrue(result.manifest().storedBytes() < result.manifest().rawBytes());
        }
    }

    @Test
    void sameInputGivesByteIdenticalOutputWhateverTheThreadCount() throws Exception {
        final Path src = SourceTrees.awkwardTree(tmp.resolve("src"));
        final Path one = prep(src, tmp.resolve("one.fs"), Compression.LZ4, 1).output();
        final Path four = prep(src, tmp.resolve("four.fs"), Compression.LZ4, 4).output();
        final List<String> names = new ArrayList<>();
        try (Stream<Path> list = Files.list(one)) {
            list.forEach(p -> names.add(p.getFileName().toString()));
        }
        assertEquals(5, names.size(), "manifest, table and 3 partitions: " + names);
        for (final String name : names) {
            assertArrayEquals(Files.readAllBytes(one.resolve(name)), Files.readAllBytes(four.resolve(name)), name);
        }
        // prep builds the table from the partitions' tables as it wrote them; upgrade reads them back from the files
        final Path table = one.resolve(org.fanstore.prep.format.TableInfo.FILE_NAME);
        final byte[] fromPrep = Files.readAllBytes(table);
        Files.delete(table);
        org.fanstore.prep.format.table.DatasetTable.write(one, org.fanstore.prep.format.Manifest.read(one));
        assertArrayEquals(fromPrep, Files.readAllBytes(table), "the table from the files is the table prep wrote");
    }

    @Test
    void partitionsAreBalancedGreedilyByBytes() throws Exception {
        final Path src = Files.createDirectories(tmp.resolve("src"));
        final int[] sizes = {900, 500, 400, 300, 200, 100};
        for (int i = 0; i < sizes.length; i++) {
            Files.write(src.resolve("f" + i), new byte[sizes[i]]);
        }
        final PrepResult result = prep(src, tmp.resolve("out.fs"), Compression.NONE, 1);
        // largest first to the least loaded: 900 -> p0, 500 -> p1, 400 -> p2, 300 -> p2, 200 -> p1, 100 -> p1
        try (Dataset dataset = Dataset.open(result.output())) {
            final String[] expected = {"part-00000.fsp", "part-00001.fsp", "part-00002.fsp", "part-00002.fsp",
                "part-00001.fsp", "part-00001.fsp"};
            for (int i = 0; i < sizes.length; i++) {
                assertEquals(expected[i], dataset.lookup(("f" + i).getBytes(StandardCharsets.US_ASCII)).orElseThrow()
                    .partition().file().getFileName().toString(), "f" + i);
            }
        }
        final List<PartitionInfo> parts = result.manifest().partitions();
        assertEquals(List.of(2L, 3L, 2L), parts.stream().map(PartitionInfo::entries).toList());
    }

    @ParameterizedTest
    @EnumSource(value = Compression.class, names = {"NONE", "LZ4"})
    void aSparseFileOverTwoGibibytesRoundTripsAndStaysSparse(final Compression compress) throws Exception {
        final Path src = Files.createDirectories(tmp.resolve("src"));
        final long size = (2L << 30) + 12345;
        SourceTrees.sparseFile(src.resolve("huge.bin"), size);
        final PrepResult result = prep(src, tmp.resolve("out.fs"), compress, 2);
        assertEquals(size, result.manifest().rawBytes());
        final Path partition = result.output().resolve(PartitionDescriptor.regularFileName(0));
        final long allocated = diskUsage(partition);
        assertTrue(allocated < 64L << 20, "partition occupies " + allocated + " bytes on disk");
        assertTrue(DatasetVerifier.verify(result.output()).ok());
        try (Dataset dataset = Dataset.open(result.output())) {
            final Dataset.Located huge = dataset.lookup("huge.bin".getBytes(StandardCharsets.US_ASCII)).orElseThrow();
            assertEquals(size, huge.entry().rawLength());
            final StreamComparison compare = new StreamComparison(src.resolve("huge.bin"));
            dataset.copy(huge, compare);
            assertEquals(size, compare.matched());
        }
    }

    @Test
    void aSymlinkLeavingTheInputIsRefusedByName() throws Exception {
        final Path src = Files.createDirectories(tmp.resolve("src/sub"));
        Files.createSymbolicLink(src.resolve("escape"), Path.of("../../outside"));
        final PrepException e = assertThrows(PrepException.class,
            () -> prep(tmp.resolve("src"), tmp.resolve("out.fs"), Compression.NONE, 1));
        assertTrue(e.getMessage().contains(src.resolve("escape").toString()), e.getMessage());
        assertFalse(Files.exists(tmp.resolve("out.fs")));
        try (Stream<Path> left = Files.list(tmp)) {
            assertEquals(List.of("src"), left.map(p -> p.getFileName().toString()).toList());
        }
    }

    @Test
    void userErrorsNameThePathAndWhatToDo() throws Exception {
        final Path missing = tmp.resolve("missing");
        final PrepException noInput = assertThrows(PrepException.class,
            () -> prep(missing, tmp.resolve("out.fs"), Compression.NONE, 1));
        assertTrue(noInput.getMessage().contains(missing + " does not exist"), noInput.getMessage());

        final Path file = Files.writeString(tmp.resolve("file"), "x");
        final PrepException notDir = assertThrows(PrepException.class,
            () -> prep(file, tmp.resolve("out.fs"), Compression.NONE, 1));
        assertTrue(notDir.getMessage().contains("is not a directory"), notDir.getMessage());

        final Path src = Files.createDirectories(tmp.resolve("src"));
        final PrepException badParent = assertThrows(PrepException.class,
            () -> prep(src, file.resolve("out.fs"), Compression.NONE, 1));
        assertTrue(badParent.getMessage().contains(file + " is not a directory"), badParent.getMessage());

        prep(src, tmp.resolve("out.fs"), Compression.NONE, 1);
        final PrepException exists = assertThrows(PrepException.class,
            () -> prep(src, tmp.resolve("out.fs"), Compression.NONE, 1));
        assertTrue(exists.getMessage().contains("--force"), exists.getMessage());

        final PrepException noBroadcast = assertThrows(PrepException.class,
            () -> prep(src, tmp.resolve("other.fs"), Compression.NONE, 1, "val/"));
        assertTrue(noBroadcast.getMessage().contains("--broadcast val"), noBroadcast.getMessage());
    }

    @Test
    void aFileListPacksOnlyTheListedPathsAndTheirParents() throws Exception {
        final Path src = SourceTrees.awkwardTree(tmp.resolve("src"));
        final Path list = tmp.resolve("list");
        Files.write(list, ("train/cats/1.jpg\n" + src.resolve("val") + "\n\n").getBytes(StandardCharsets.UTF_8));
        final PrepResult result = DatasetPacker.prep(new PrepOptions(src, tmp.resolve("out.fs"), null, 2,
            Compression.NONE, List.of(), 1, list, false, false), PrepProgress.silent(), warnings::add);
        try (Dataset dataset = Dataset.open(result.output())) {
            final List<String> paths = dataset.all().stream().map(l -> l.entry().pathString()).sorted().toList();
            assertEquals(List.of(".", "train", "train/cats", "train/cats/1.jpg", "val", "val/link-to-big",
                "val/v0.txt", "val/v1.txt", "val/v2.txt", "val/v3.txt", "val/v4.txt"), paths);
        }
    }

    private static long diskUsage(final Path file) throws IOException, InterruptedException {
        final Process du = new ProcessBuilder("du", "-k", file.toString()).start();
        final String out = new String(du.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        assertEquals(0, du.waitFor());
        return Long.parseLong(out.split("\\s+")[0]) * 1024;
    }

    /** A channel that compares what it receives with a file, without holding either in memory. */
    private static final class StreamComparison implements java.nio.channels.WritableByteChannel {
        private final java.nio.channels.FileChannel expected;
        private final java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate(1 << 20);
        private long matched;

        StreamComparison(final Path file) throws IOException {
            expected = java.nio.channels.FileChannel.open(file);
        }

        @Override
        public int write(final java.nio.ByteBuffer src) throws IOException {
            final int n = src.remaining();
            while (src.hasRemaining()) {
                buffer.clear().limit(Math.min(buffer.capacity(), src.remaining()));
                final int got = expected.read(buffer, matched);
                assertTrue(got > 0, "output is longer than the source");
                buffer.flip();
                final java.nio.ByteBuffer slice = src.slice().limit(got);
                assertEquals(buffer, slice, "mismatch near byte " + matched);
                src.position(src.position() + got);
                matched += got;
            }
            return n;
        }

        long matched() {
            return matched;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() throws IOException {
            expected.close();
        }
    }
}
