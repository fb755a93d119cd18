package org.fanstore.runtime.open;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.stream.Stream;
import org.fanstore.prep.format.FileModes;
import org.fanstore.runtime.shm.Errno;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * OpenService's errno policy as a table: whether the key is known, the OPEN's flags and the entry's mode in, the
 * errno out (0: served). The order matters where two rules apply: an unknown key is ENOENT whatever the flags,
 * write access is EROFS even on a directory.
 */
class OpenServiceErrnoTest {
    private static final int O_WRONLY = 01;
    private static final int O_RDWR = 02;
    private static final int O_CREAT = 0100;
    private static final int O_EXCL = 0200;
    private static final int O_TRUNC = 01000;
    private static final int O_APPEND = 02000;
    private static final int FILE = FileModes.S_IFREG | 0644;
    private static final int DIR = FileModes.S_IFDIR | 0755;
    private static final int LINK = FileModes.S_IFLNK | 0777;

    static Stream<Arguments> table() {
        return Stream.of(
                Arguments.of("read a file", true, 0, FILE, 0),
                Arguments.of("slice bit", true, OpenService.SLICE_OK, FILE, 0),
                Arguments.of("O_CREAT without O_EXCL opens", true, O_CREAT, FILE, 0),
                Arguments.of("O_APPEND means nothing to a reader", true, O_APPEND, FILE, 0),
                Arguments.of("unknown key", false, 0, 0, Errno.ENOENT),
                Arguments.of("unknown key, write", false, O_WRONLY, 0, Errno.ENOENT),
                Arguments.of("write only", true, O_WRONLY, FILE, Errno.EROFS),
                Arguments.of("read-write", true, O_RDWR, FILE, Errno.EROFS),
                Arguments.of("O_TRUNC", true, O_TRUNC, FILE, Errno.EROFS),
                Arguments.of("write a directory", true, O_WRONLY, DIR, Errno.EROFS),
                Arguments.of("O_CREAT|O_EXCL", true, O_CREAT | O_EXCL, FILE, Errno.EEXIST),
                Arguments.of("O_EXCL alone", true, O_EXCL, FILE, 0),
                Arguments.of("O_CREAT|O_EXCL|O_RDWR", true, O_CREAT | O_EXCL | O_RDWR, FILE, Errno.EROFS),
                Arguments.of("directory", true, 0, DIR, Errno.EISDIR),
                Arguments.of("O_CREAT|O_EXCL on a directory", true, O_CREAT | O_EXCL, DIR, Errno.EEXIST),
                Arguments.of("symlink", true, 0, LINK, Errno.EINVAL),
                Arguments.of("no type bits", true, 0, 0644, Errno.EINVAL));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void errnoPolicy(String row, boolean known, int flags, int mode, int errno) {
        assertEquals(errno, OpenService.refusal(known, flags, mode), row);
    }
}
