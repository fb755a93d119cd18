package org.fanstore.runtime.output;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.fanstore.runtime.layout.RankDirectory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PUBLISH on a real upper directory: the staging link and the FILE record it commits. */
class OutputServiceTest {
    @TempDir
    Path upper;
    @TempDir
    Path staging;

    private final MapOutputNamespace ns = new MapOutputNamespace(Set.of());
    private final List<OutputRecord> committed = new ArrayList<>();
    private int answer;

    private OutputService service() {
        OutputCommitter committer = (r, timeout) -> {
            committed.add(r);
            return answer;
        };
        return new OutputService(ns, committer, new OutputApplier(ns, upper, OutputDrain.NONE, 3), null, staging,
                upper, 3, null, Duration.ofSeconds(1));
    }

    @Test
    void publishLinksTheInodeAndCommitsWhatTheFileSays() throws Exception {
        Path f = upper.resolve("d/x.h5");
        Files.createDirectories(f.getParent());
        Files.writeString(f, "hello");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r-----"));
        Instant mtime = Instant.ofEpochSecond(1_700_000_000, 987_654_321);
        Files.setLastModifiedTime(f, FileTime.from(mtime));
        assertEquals(0, service().publish("d/x.h5".getBytes(UTF_8)));
        assertEquals(1, committed.size());
        OutputRecord r = committed.get(0);
        assertEquals(OutputRecord.Kind.FILE, r.kind());
        assertEquals("d/x.h5", new String(r.key(), UTF_8));
        assertEquals(5, r.size());
        assertEquals(0100640, r.mode());
        assertEquals(1_700_000_000_987_654_321L, r.mtimeNanos());
        assertEquals(3, r.holderRank());
        assertEquals(OutputObjects.FIRST + 1, r.objectId());
        assertFalse(r.exclusive());
        Path link = RankDirectory.STAGING_FILE.in(staging, r.objectId());
        assertTrue(Files.isSameFile(f, link), "the staging name is a hard link to the upper file");
        Files.delete(f);
        assertEquals("hello", Files.readString(link), "the bytes stay reachable after a local unlink");
    }

    @Test
    void nothingToPublishIsNoErrorAndAFailedCommitDropsTheLink() throws Exception {
        OutputService s = service();
        assertEquals(0, s.publish("absent".getBytes(UTF_8)));
        Files.createDirectories(upper.resolve("dir"));
        assertEquals(0, s.publish("dir".getBytes(UTF_8)));
        Files.createSymbolicLink(upper.resolve("link"), Path.of("dir"));
        assertEquals(0, s.publish("link".getBytes(UTF_8)));
        assertEquals(List.of(), committed);
        Files.writeString(upper.resolve("ro"), "x");
        answer = Errnos.EROFS;
        assertEquals(Errnos.EROFS, s.publish("ro".getBytes(UTF_8)));
        try (var names = Files.list(staging)) {
            assertEquals(0, names.count(), "no staging link is left for a refused commit");
        }
    }
}
