package org.fanstore.runtime.shm;

import static org.fanstore.runtime.shm.ControlFileDescriptor.*;

/**
 * Which service answers which op (README.md, "Slot" and "Output operations"): an OPEN of a table entry goes to the
 * read path; an OPEN of no entry (a committed output) and ops 5-9 to the write path. Ops 2-4 (CREATE, RELEASE, HOLD
 * of the old staging design) are retired: EINVAL. Other ops never get here ({@link Dispatcher} answers ENOSYS).
 */
public record OpRouter(RequestHandler entryOpens, RequestHandler outputOpens, RequestHandler outputOps)
        implements RequestHandler {
    @Override
    public void handle(final Request request, final Responder responder) {
        switch (request.op()) {
            case OP_OPEN -> (request.entryIndex() == ENTRY_NONE ? outputOpens : entryOpens).handle(request, responder);
            case OP_UNLINK, OP_RENAME, OP_MKDIR, OP_RMDIR, OP_PUBLISH -> outputOps.handle(request, responder);
            case 2, 3, 4 -> responder.error(Errno.EINVAL);
            default -> responder.error(Errno.ENOSYS);
        }
    }
}
