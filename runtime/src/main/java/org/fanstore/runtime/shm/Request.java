package org.fanstore.runtime.shm;

import java.nio.charset.StandardCharsets;

/**
 * One client request, copied out of its slot so a handler may keep it and answer later on any thread.
 */
public final class Request {
    private final int op;
    private final int flags;
    private final int entryIndex;
    private final byte[] key;

    Request(final int op, final int flags, final int entryIndex, final byte[] key) {
        this.op = op;
        this.flags = flags;
        this.entryIndex = entryIndex;
        this.key = key;
    }

    /** Operation, {@link ControlFileDescriptor#OP_OPEN}. */
    public int op() {
        return op;
    }

    /** The caller's open(2) flags. */
    public int flags() {
        return flags;
    }

    /** Metadata-table entry the client resolved, or {@link ControlFileDescriptor#ENTRY_NONE}. */
    public int entryIndex() {
        return entryIndex;
    }

    /** The key bytes without the terminating NUL (a private copy; do not modify). */
    public byte[] key() {
        return key;
    }

    /** The key decoded as UTF-8 (convenience; not for hot paths). */
    public String keyString() {
        return new String(key, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "Request{op=" + op + ", flags=" + flags + ", entry=" + entryIndex + ", key=" + keyString() + "}";
    }
}
