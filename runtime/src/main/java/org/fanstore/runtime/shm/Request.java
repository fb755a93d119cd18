package org.fanstore.runtime.shm;

import java.nio.charset.StandardCharsets;

/**
 * One client request, copied out of its slot so a handler may keep it and answer later on any thread.
 */
public final class Request {
    private final int op;
    private final int flags;
    private final int entryIndex;
    private final long argument;
    private final byte[] key;
    private final long ringWaitNanos;

    Request(final int op, final int flags, final int entryIndex, final long argument, final byte[] key,
        final long ringWaitNanos) {
        this.ringWaitNanos = ringWaitNanos;
        this.op = op;
        this.flags = flags;
        this.entryIndex = entryIndex;
        this.argument = argument;
        this.key = key;
    }

    /**
     * Nanoseconds from the client's submit stamp to the dispatcher taking the request off the ring, or -1 when
     * the client stamped none (statistics only).
     */
    public long ringWaitNanos() {
        return ringWaitNanos;
    }

    /** The slot's generation field: OPEN the table generation; output operations the client's pid. */
    public long argument() {
        return argument;
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

    /**
     * The payload's first name: the key (RENAME: the source). The payload is this, a NUL and, for RENAME only,
     * the target; {@link #target()} splits it.
     */
    public byte[] source() {
        final int nul = indexOfNul();
        return nul < 0 ? key : java.util.Arrays.copyOf(key, nul);
    }

    /** RENAME: the bytes after the first NUL (the target key); empty otherwise. */
    public byte[] target() {
        final int nul = indexOfNul();
        return nul < 0 ? new byte[0] : java.util.Arrays.copyOfRange(key, nul + 1, key.length);
    }

    private int indexOfNul() {
        for (int i = 0; i < key.length; i++) {
            if (key[i] == 0) {
                return i;
            }
        }
        return -1;
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
