package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.fanstore.prep.format.TableInfo;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The metadata table prep builds, as a job sees it: the namespace under the mount is the source tree's, name for
 * name and stat field for stat field, at 1, 2 and 3 ranks (the table broadcast to the others); and a table that
 * does not belong to its dataset (altered, truncated, missing, another dataset's, or none: an older prep) is
 * refused at start, by every rank, with one line naming the file and the fix.
 */
class MetadataTableJobTest {
    /** What a user compares: names, sizes, modes, types, mtimes to the nanosecond, owners, link counts. */
    private static final String LISTING = "ls -lR --time-style=full-iso ds;"
            + " find ds -exec stat -c '%n|%s|%A|%F|%y|%U|%G|%h' {} + | sort";

    @TempDir
    static Path work;
    static Path src;
    static Path data;

    @BeforeAll
    static void prepare() throws Exception {
        src = work.resolve("src");
        Path ds = Files.createDirectories(src.resolve("ds"));
        for (int d = 0; d < 4; d++) {
            Path sub = Files.createDirectories(ds.resolve("class " + d + "/deeper"));
            for (int i = 0; i < 25; i++) {
                Path f = (i % 5 == 0 ? sub : sub.getParent()).resolve("img-" + i + (i % 2 == 0 ? ".jpg" : ".txt"));
                Files.writeString(f, ("sample " + d + "/" + i + "\n").repeat(1 + i * 37));
                Files.setLastModifiedTime(f, FileTime.from(Instant.ofEpochSecond(1_700_000_000L + i, 123_456_789)));
            }
        }
        Files.createDirectories(ds.resolve("empty"));
        Files.writeString(ds.resolve("run.sh"), "#!/bin/sh\necho hi\n");
        Files.setPosixFilePermissions(ds.resolve("run.sh"), PosixFilePermissions.fromString("rwxr-x---"));
        Files.writeString(ds.resolve("caf\u00e9.csv"), "a,b\n1,2\n");
        Files.createSymbolicLink(ds.resolve("latest"), Path.of("class 1/img-3.txt"));
        data = work.resolve("ds.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", ds.toString(), "--output",
                data.toString(), "--partitions", "3", "--compress", "lz4"));
    }

    private static String native_() throws Exception {
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", LISTING).directory(src.toFile()).redirectErrorStream(true);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        return out;
    }

    @ParameterizedTest(name = "{0} rank(s)")
    @ValueSource(ints = {1, 2, 3})
    void everyRankSeesTheSourceTreesNamespace(int ranks) throws Exception {
        Path out = Files.createDirectories(work.resolve("listing-" + ranks));
        FanstoreProcess.Result r = RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 180, "run", "--ranks",
                "" + ranks, "--data", data.toString(), "--local-dir", work.toString(), "--", "sh", "-c",
                "cd /fanstore && { " + LISTING + "; } > " + out + "/rank-$FANSTORE_RANK.txt 2>&1"));
        String want = native_();
        for (int rank = 0; rank < ranks; rank++) {
            String got = Files.readString(out.resolve("rank-" + rank + ".txt"), StandardCharsets.UTF_8);
            assertEquals(want, got, "rank " + rank + " of " + ranks + "; " + r.stderr());
        }
    }

    /** A copy of the dataset with one change, run on 2 ranks: rank 0 refuses it and tells rank 1 why. */
    private static FanstoreProcess.Result runDamaged(String name, UnaryOperator<Path> damage) throws Exception {
        Path copy = work.resolve(name + ".fs");
        Files.createDirectories(copy);
        try (var files = Files.list(data)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.copy(f, copy.resolve(f.getFileName()));
            }
        }
        damage.apply(copy);
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of(), 120, "run", "--ranks", "2", "--data",
                copy.toString(), "--local-dir", work.toString(), "--", "true");
        assertNotEquals(0, r.status(), r.stderr());
        assertFalse(r.stderr().contains("Exception") || r.stderr().contains("\tat "), r.stderr());
        FanstoreProcess.Result verify = FanstoreProcess.run(work, Map.of(), 120, "verify", copy.toString());
        assertEquals(1, verify.status(), verify.stdout() + verify.stderr());
        assertTrue(verify.stdout().contains("FAULT " + TableInfo.FILE_NAME), verify.stdout());
        return r;
    }

    private static Path edit(Path file, UnaryOperator<byte[]> change) {
        try {
            Files.write(file, change.apply(Files.readAllBytes(file)));
            return file;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void anAlteredTableIsRefusedNamingIt() throws Exception {
        FanstoreProcess.Result r = runDamaged("altered", d -> edit(d.resolve(TableInfo.FILE_NAME), b -> {
            b[b.length / 2] ^= 1;
            return b;
        }));
        String table = work.resolve("altered.fs").resolve(TableInfo.FILE_NAME).toString();
        assertTrue(r.stderr().contains(table + " has CRC32C"), r.stderr());
        assertTrue(r.stderr().contains("fanstore upgrade"), r.stderr());
    }

    @Test
    void aTruncatedTableIsRefusedNamingIt() throws Exception {
        FanstoreProcess.Result r = runDamaged("truncated", d -> edit(d.resolve(TableInfo.FILE_NAME),
                b -> java.util.Arrays.copyOf(b, b.length - 100)));
        assertTrue(r.stderr().contains(work.resolve("truncated.fs").resolve(TableInfo.FILE_NAME)
                + " is "), r.stderr());
        assertTrue(r.stderr().contains("(truncated or replaced)"), r.stderr());
    }

    @Test
    void aMissingTableIsRefusedNamingIt() throws Exception {
        FanstoreProcess.Result r = runDamaged("missing", d -> {
            try {
                Files.delete(d.resolve(TableInfo.FILE_NAME));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return d;
        });
        assertTrue(r.stderr().contains(work.resolve("missing.fs").resolve(TableInfo.FILE_NAME) + " is missing"),
                r.stderr());
    }

    @Test
    void anotherDatasetsTableIsRefusedEvenWithItsManifestLine() throws Exception {
        Path otherSrc = Files.createDirectories(work.resolve("other-src/other"));
        Files.writeString(otherSrc.resolve("a.txt"), "other");
        Path other = work.resolve("other.fs");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "prep", "--input", otherSrc.toString(), "--output",
                other.toString(), "--partitions", "3"));
        String otherLine = Files.readAllLines(other.resolve("manifest.txt")).stream()
                .filter(l -> l.startsWith("table ")).findFirst().orElseThrow();
        FanstoreProcess.Result r = runDamaged("foreign", d -> {
            try {
                Files.copy(other.resolve(TableInfo.FILE_NAME), d.resolve(TableInfo.FILE_NAME),
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                return edit(d.resolve("manifest.txt"), b -> new String(b, StandardCharsets.ISO_8859_1)
                        .replaceAll("(?m)^table .*$", otherLine).getBytes(StandardCharsets.ISO_8859_1));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        assertTrue(r.stderr().contains(TableInfo.FILE_NAME + " belongs to another dataset"), r.stderr());
    }

    /** A dataset prepped before tables existed: refused naming the command that upgrades it, which then works. */
    @Test
    void anOlderDatasetIsRefusedUntilUpgradedInPlace() throws Exception {
        FanstoreProcess.Result r = runDamaged("older", d -> {
            try {
                Files.delete(d.resolve(TableInfo.FILE_NAME));
                return edit(d.resolve("manifest.txt"), b -> new String(b, StandardCharsets.ISO_8859_1)
                        .replace("fanstore-manifest 2", "fanstore-manifest 1").replaceAll("(?m)^table .*\n", "")
                        .getBytes(StandardCharsets.ISO_8859_1));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        Path older = work.resolve("older.fs");
        assertTrue(r.stderr().contains(older + " was prepped by an older fanstore"), r.stderr());
        assertTrue(r.stderr().contains("fanstore upgrade " + older), r.stderr());
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "upgrade", older.toString()));
        assertArrayEqualsFile(data.resolve(TableInfo.FILE_NAME), older.resolve(TableInfo.FILE_NAME));
        assertEquals(Files.readString(data.resolve("manifest.txt")), Files.readString(older.resolve("manifest.txt")),
                "upgrade writes what prep writes");
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "run", "--ranks", "2", "--data", older.toString(),
                "--local-dir", work.toString(), "--", "cat", "/fanstore/ds/run.sh"));
    }

    /**
     * A dataset whose table is format 2 (tests/vectors/upgrade/format2.fs, prepped before issue 44's compact
     * table): refused at start with one line naming its format and {@code fanstore upgrade}, which rewrites the
     * table in format 3 in place; then every rank reads a file through it.
     */
    @Test
    void aFormatTwoDatasetIsRefusedUntilUpgradedToFormatThree() throws Exception {
        Path fixture = FanstoreProcess.repo().resolve("tests/vectors/upgrade/format2.fs");
        Path old = Files.createDirectories(work.resolve("format2.fs"));
        for (String name : new String[] {"manifest.txt", "part-00000.fsp", TableInfo.FILE_NAME}) {
            Files.copy(fixture.resolve(name), old.resolve(name));
        }
        FanstoreProcess.Result r = FanstoreProcess.run(work, Map.of(), 120, "run", "--ranks", "2", "--data",
                old.toString(), "--local-dir", work.toString(), "--", "true");
        assertNotEquals(0, r.status(), r.stderr());
        assertFalse(r.stderr().contains("Exception") || r.stderr().contains("\tat "), r.stderr());
        assertTrue(r.stderr().contains("(format 2,") && r.stderr().contains("fanstore upgrade " + old), r.stderr());
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "upgrade", old.toString()));
        Path out = Files.createDirectories(work.resolve("format2-read"));
        RunJobTest.ok(FanstoreProcess.run(work, Map.of(), 120, "run", "--ranks", "2", "--data", old.toString(),
                "--local-dir", work.toString(), "--", "sh", "-c",
                "cat /fanstore/golden/data/hello.txt > " + out + "/rank-$FANSTORE_RANK.txt"));
        for (int rank = 0; rank < 2; rank++) {
            assertEquals("hello, fanstore\n", Files.readString(out.resolve("rank-" + rank + ".txt")), "rank " + rank);
        }
    }

    private static void assertArrayEqualsFile(Path want, Path got) throws Exception {
        assertTrue(java.util.Arrays.equals(Files.readAllBytes(want), Files.readAllBytes(got)),
                got + " differs from " + want);
    }
}
