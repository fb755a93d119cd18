package org.fanstore.runtime.shm;

/** The Linux errno values the runtime answers with (positive; the wire carries them negated). */
public final class Errno {
    /** No such file: the key is not in the namespace. */
    public static final int ENOENT = 2;
    /** I/O error: corrupt body, unreachable owner, server failure. */
    public static final int EIO = 5;
    /** No space left on device: the local directory or the cache's tmpfs filled while unpacking or fetching. */
    public static final int ENOSPC = 28;
    /** File exists: O_CREAT|O_EXCL on an input file. */
    public static final int EEXIST = 17;
    /** Is a directory: an OPEN of a directory (the shim lists directories itself). */
    public static final int EISDIR = 21;
    /** Invalid argument: a retired op (2-4, see {@link OpRouter}), or an OPEN of an entry neither a regular file nor
     * a directory. */
    public static final int EINVAL = 22;
    /** Read-only file system: a write to an input file. */
    public static final int EROFS = 30;
    /** The answer does not fit the slot's response area. */
    public static final int ENAMETOOLONG = 36;
    /** Operation not implemented by this server. */
    public static final int ENOSYS = 38;

    private Errno() {
    }
}
