package org.fanstore.runtime.shm;

import static org.fanstore.runtime.shm.ControlFileDescriptor.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Each op reaches its service, with the responder it came with; retired and unknown ops are answered in place. */
class OpRouterTest {
    private final List<String> routed = new ArrayList<>();
    private final List<Responder> responders = new ArrayList<>();
    private final OpRouter router = new OpRouter(record("entry"), record("output-open"), record("output-op"));

    private RequestHandler record(final String service) {
        return (request, responder) -> {
            routed.add(service + " " + request.op());
            responders.add(responder);
        };
    }

    private static Request request(final int op, final int entryIndex) {
        return new Request(op, 0, entryIndex, 0, "k".getBytes(), -1);
    }

    @Test
    void anOpenOfATableEntryGoesToTheReadPath() {
        final Errors answer = new Errors();
        router.handle(request(OP_OPEN, 7), answer);
        assertEquals(List.of("entry 1"), routed);
        assertSame(answer, responders.get(0));
        assertEquals(List.of(), answer.errnos);
    }

    @Test
    void anOpenOfNoEntryGoesToTheCommittedOutputs() {
        router.handle(request(OP_OPEN, ENTRY_NONE), new Errors());
        assertEquals(List.of("output-open 1"), routed);
    }

    @Test
    void everyOutputOperationGoesToTheWritePath() {
        for (final int op : new int[] {OP_UNLINK, OP_RENAME, OP_MKDIR, OP_RMDIR, OP_PUBLISH}) {
            router.handle(request(op, 0), new Errors());
        }
        assertEquals(List.of("output-op 5", "output-op 6", "output-op 7", "output-op 8", "output-op 9"), routed);
    }

    @Test
    void theRetiredStagingOpsAreInvalid() {
        final Errors answer = new Errors();
        for (int op = 2; op <= 4; op++) {
            router.handle(request(op, 0), answer);
        }
        assertEquals(List.of(), routed);
        assertEquals(List.of(Errno.EINVAL, Errno.EINVAL, Errno.EINVAL), answer.errnos);
    }

    @Test
    void anUnknownOpIsNotImplemented() {
        final Errors answer = new Errors();
        router.handle(request(0, 0), answer);
        router.handle(request(OP_PUBLISH + 1, 0), answer);
        assertEquals(List.of(), routed);
        assertEquals(List.of(Errno.ENOSYS, Errno.ENOSYS), answer.errnos);
    }

    /** Records the errnos it is answered with; a success would be a routing bug here. */
    private static final class Errors implements Responder {
        final List<Integer> errnos = new ArrayList<>();

        @Override
        public void ok(final byte[] path) {
            throw new AssertionError("answered ok");
        }

        @Override
        public void ok(final int result, final byte[] path) {
            throw new AssertionError("answered ok");
        }

        @Override
        public void error(final int errno) {
            errnos.add(errno);
        }
    }
}
