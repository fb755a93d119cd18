package org.fanstore.runtime.output;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PUBLISH on a real upper directory: the FILE record it commits, and what it refuses to publish. */
class OutputServiceTest {
    @TempDir
    Path upper;

    private final MapOutputNamespace ns = new MapOutputNamespace(Set.of());
    private final List<OutputRecord> committed = new ArrayList<>();
    private int answer;

    private OutputService service() {
        OutputCommitter committer = (r, timeout) -> {
            committed.add(r);
            return answer;
        };
        return new OutputService(ns, committer, new OutputApplier(ns, upper, OutputDrain.NONE, 3), null, upper, 3,
                null, Duration.ofSeconds(1));
    }

    @Test
    void publishCommitsWhatTheFileSays() throws Exception {
        Path f = upper.resolve("d/x.h5");
        Files.createDirectories(f.getParent());
        Files.writeString(f, "hello");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r-----"));
        Instant mtime = Instant.ofEpochSecond(1_700_000_000, 987_654_321);
        Files.setLastModifiedTime(f, FileTime.from(mtime));
        assertEquals(0, service().publish("d/x.h5".getBytes(UTF_8)));
        assertEquals(2, committed.size(), "the directory the namespace did not know, then the file");
        assertEquals(OutputRecord.Kind.DIR, committed.get(0).kind());
        assertEquals("d", new String(committed.get(0).key(), UTF_8));
        OutputRecord r = committed.get(1);
        assertEquals(OutputRecord.Kind.FILE, r.kind());
        assertEquals("d/x.h5", new String(r.key(), UTF_8));
        assertEquals(5, r.size());
        assertEquals(0100640, r.mode());
        assertEquals(1_700_000_000_987_654_321L, r.mtimeNanos());
        assertEquals(3, r.holderRank());
        assertEquals(OutputObjects.of(3, 1), r.objectId());
        assertFalse(r.exclusive());
        assertEquals(1, (Integer) Files.getAttribute(f, "unix:nlink"), "publishing adds no name to the file");
    }

    @Test
    void nothingToPublishIsNoErrorAndARefusedCommitIsTheAnswer() throws Exception {
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
    }
}
