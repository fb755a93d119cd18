package org.fanstore.runtime.output;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import jnr.ffi.LastError;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import org.fanstore.runtime.shm.NativeCalls;

/**
 * The drain's reads of the job's upper tree, opened with O_NOATIME: a job's file or directory keeps the atime the
 * job gave it (utime to an atime older than the mtime, then relatime would update it on the drain's read). O_NOATIME
 * needs the file's owner, the runtime's user as the job's; anyone else's file is read with a plain open (EPERM).
 * Paths and names go through the encoding Java's own file system uses ({@code sun.jnu.encoding}).
 */
final class NoAtime {
    private static final NativeCalls LIBC = NativeCalls.LIBC;
    private static final int O_RDONLY = 0;
    private static final int O_NOATIME = 01000000;
    private static final int O_CLOEXEC = 02000000;
    private static final boolean ARM = "aarch64".equals(System.getProperty("os.arch"));
    /** O_NOFOLLOW and O_DIRECTORY differ between x86-64 and aarch64 (asm-generic). */
    private static final int O_NOFOLLOW = ARM ? 0100000 : 0400000;
    private static final int O_DIRECTORY = ARM ? 040000 : 0200000;
    private static final int ENOENT = 2;
    private static final int EPERM = 1;
    private static final int ENOTDIR = 20;
    private static final int ELOOP = 40;
    private static final int EINTR = 4;
    /** Where d_name starts in glibc's struct dirent on 64-bit Linux: after d_ino, d_off, d_reclen, d_type. */
    private static final int D_NAME = 19;
    private static final Charset JNU = Charset.forName(System.getProperty("sun.jnu.encoding", "UTF-8"));

    private NoAtime() {
    }

    /** A descriptor reading {@code file} (not following a symlink); the caller closes it ({@link #close}). */
    static int openFile(Path file) throws IOException {
        return open(file, O_RDONLY | O_NOFOLLOW);
    }

    /** Reads into {@code buffer} from its position, at most its remaining bytes; -1 at the end. */
    static int read(int fd, Path file, ByteBuffer buffer) throws IOException {
        while (true) {
            long n = LIBC.read(fd, buffer, buffer.remaining());
            if (n > 0) {
                buffer.position(buffer.position() + (int) n);
                return (int) n;
            }
            if (n == 0) {
                return -1;
            }
            int e = errno();
            if (e != EINTR) {
                throw new IOException(file + ": read failed (errno " + e + ")");
            }
        }
    }

    static void close(int fd) {
        LIBC.close(fd);
    }

    /** The names in the directory {@code dir} (not following a symlink), without "." and "..". */
    static List<String> list(Path dir) throws IOException {
        int fd = open(dir, O_RDONLY | O_NOFOLLOW | O_DIRECTORY);
        Pointer d = LIBC.fdopendir(fd);
        if (d == null) {
            int e = errno();
            LIBC.close(fd);
            throw new IOException(dir + ": fdopendir failed (errno " + e + ")");
        }
        try {
            List<String> names = new ArrayList<>();
            for (Pointer e = LIBC.readdir(d); e != null; e = LIBC.readdir(d)) {
                int length = e.indexOf(D_NAME, (byte) 0);
                byte[] name = new byte[length];
                e.get(D_NAME, name, 0, length);
                if (!(length == 1 && name[0] == '.') && !(length == 2 && name[0] == '.' && name[1] == '.')) {
                    names.add(new String(name, JNU));
                }
            }
            return names;
        } finally {
            LIBC.closedir(d);
        }
    }

    private static int open(Path p, int flags) throws IOException {
        byte[] s = p.toString().getBytes(JNU);
        byte[] path = Arrays.copyOf(s, s.length + 1);
        int fd = LIBC.open(path, flags | O_NOATIME | O_CLOEXEC);
        if (fd < 0 && errno() == EPERM) {
            fd = LIBC.open(path, flags | O_CLOEXEC);  // not the owner's: the read may touch its atime
        }
        if (fd < 0) {
            int e = errno();
            throw e == ENOENT || e == ENOTDIR || e == ELOOP ? new NoSuchFileException(p.toString())
                    : new IOException(p + ": open failed (errno " + e + ")");
        }
        return fd;
    }

    private static int errno() {
        return LastError.getLastError(Runtime.getRuntime(LIBC));
    }
}
