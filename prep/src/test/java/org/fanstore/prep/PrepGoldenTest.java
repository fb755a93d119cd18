package org.fanstore.prep;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributeView;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.fanstore.prep.format.Compression;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pins prep's output byte for byte: the awkward tree ({@link SourceTrees#awkwardTree}) with every owner, mode and
 * time fixed is prepped, and each output file's SHA-256 must equal what prep wrote before its listing, plan and
 * table moved to compact storage (main 4e89c45, README "Memory"). A change to the table, partition or manifest
 * format updates these on purpose; anything else that changes them is a bug.
 */
class PrepGoldenTest {
    /** Printed instead of checked with -Dfanstore.printPrepGolden=true (to record after a deliberate change). */
    private static final boolean PRINT = Boolean.getBoolean("fanstore.printPrepGolden");

    @TempDir
    Path tmp;

    @Test
    void rawWithABroadcastDirectoryGivesTheRecordedBytes() throws Exception {
        check(Compression.NONE, List.of("val/"), Map.of(
            "manifest.txt",
            "ea748b5a3ccd35021b7b717dcfc42dd08478cebdd7d83df6d06cd1987fea6871",
            "namespace.tbl",
            "a9beadca6a3bb6bd430f08d823df6424b68a9f1f978046ecfeb488f1248b80ea",
            "part-00000.fsp",
            "57f338a854088cdaa487a2b252d67702e7e887fd6abc6b09ddf88f8d8a101c99",
            "part-00001.fsp",
            "b59d084b677287d6c6923f3c8e7d78e9c7f613ca437eae36c9495a894bd2ae08",
            "part-00002.fsp",
            "b7097c91e9104abdcaa04b853083ec2a3ce5610d4feac9c86a97073e34f32ddd",
            "bcast-00000.fsp",
            "1bd78129ab6fc8d71e3bcd23492984d8518fba83c4131c56b3a8300974e3f056"));
    }

    @Test
    void lz4GivesTheRecordedBytes() throws Exception {
        check(Compression.LZ4, List.of(), Map.of(
            "manifest.txt",
            "732c4296ffb42b37bcae2b97ee89b40ad283d7dcaa9a176d096c4416d641c204",
            "namespace.tbl",
            "49d62d6e7884484068f52ff961db66f3936f850d9f0ff7c970b7238af48a1730",
            "part-00000.fsp",
            "57f338a854088cdaa487a2b252d67702e7e887fd6abc6b09ddf88f8d8a101c99",
            "part-00001.fsp",
            "f3ce85fc39dce4839d71c72c9273d1dce7019ef18ac7ecba42c2deebcb1e86a1",
            "part-00002.fsp",
            "45561551ab0e9b8ab7335cd1b4d63bceb9a877c80a0c128dc33fb2c79a6024ba"));
    }

    private void check(final Compression compress, final List<String> broadcast, final Map<String, String> expected)
        throws Exception {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "needs root to fix the owners");
        final Path src = fixed(SourceTrees.awkwardTree(tmp.resolve("src")));
        final Path out = DatasetPacker.prep(new PrepOptions(src, tmp.resolve("out.fs"), "golden".getBytes(
            java.nio.charset.StandardCharsets.US_ASCII), 3, compress, broadcast, 2, null, false, false),
            PrepProgress.silent(), w -> { }).output();
        final Map<String, String> got = new TreeMap<>();
        try (Stream<Path> list = Files.list(out)) {
            for (final Path p : (Iterable<Path>)list::iterator) {
                got.put(p.getFileName().toString(), sha256(p));
            }
        }
        if (PRINT) {
            got.forEach((k, v) -> System.out.println("golden " + compress + " " + k + " " + v));
            return;
        }
        assertEquals(new TreeMap<>(expected), got);
    }

    /**
     * Gives every entry of {@code root} a fixed owner, mode (not symlinks: always 0777) and mtime, children before
     * their directory (a child's change would bump the directory's mtime again).
     */
    private static Path fixed(final Path root) throws IOException, InterruptedException {
        final List<Path> all = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(root)) {
            walk.forEach(all::add);
        }
        all.sort(null); // readdir's order differs between file systems; the path order does not
        for (int i = all.size() - 1; i >= 0; i--) {
            final Path p = all.get(i);
            Files.setAttribute(p, "unix:uid", 1000 + i % 3, LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(p, "unix:gid", 2000 + i % 2, LinkOption.NOFOLLOW_LINKS);
            if (Files.isSymbolicLink(p)) {
                // touch -h: the JDK sets a symlink's own times only where lutimes exists
                final Process touch = new ProcessBuilder("touch", "-h", "-d", "@1700000000.25", p.toString())
                    .start();
                assertEquals(0, touch.waitFor());
                continue;
            }
            final boolean dir = Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS);
            if (!dir && !Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                continue; // the FIFO, which prep skips (setting its times would open it and block)
            }
            Files.setAttribute(p, "unix:mode", dir ? 0755 : (i % 4 == 0 ? 0600 : 0644), LinkOption.NOFOLLOW_LINKS);
            Files.getFileAttributeView(p, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).setTimes(
                FileTime.fromMillis(1_600_000_000_000L + 1_000_123L * i), null, null);
        }
        return root;
    }

    private static String sha256(final Path file) throws IOException, NoSuchAlgorithmException {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }
}
