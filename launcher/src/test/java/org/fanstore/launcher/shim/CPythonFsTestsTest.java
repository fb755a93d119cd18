package org.fanstore.launcher.shim;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Outputs as a local file system, measured by CPython's own file-system tests (test_os, test_shutil, test_tempfile,
 * test_glob, test_pathlib, test_fileio, test_posixpath; about 1,200 tests): tests/cpython/run-fs-tests.py runs them
 * natively and with their temporary directory (and working directory) under the mount of a {@code fanstore run},
 * and none that passes natively may fail under the mount. About 30 s. Needs Debian's libpython3.11-testsuite
 * (scripts/setup-debian.sh installs it); without it the test is skipped, not failed.
 */
class CPythonFsTestsTest {

    @Test
    void noTestThatPassesNativelyFailsUnderTheMount() throws Exception {
        assumeTrue(Files.exists(Path.of("/usr/lib/python3.11/test/test_os.py")),
                "libpython3.11-testsuite is not installed");
        String out = RealProgramsTest.runScript("tests/cpython/run-fs-tests.py", Map.of());
        assertTrue(out.lines().anyMatch(l -> l.matches("[1-9][0-9]* passed, 0 failed")), out);
    }
}
