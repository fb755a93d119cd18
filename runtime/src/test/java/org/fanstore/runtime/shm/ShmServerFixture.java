package org.fanstore.runtime.shm;

import java.nio.file.Path;

import org.fanstore.runtime.layout.RankDirectory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** A fresh /dev/shm directory per test, and the server and handler a test starts there, closed afterwards. */
abstract class ShmServerFixture {
    Path dir;
    Path ctl;
    EchoHandler handler;
    ShmServer server;

    @BeforeEach
    void createDir() throws Exception {
        dir = ShmTestSupport.shmTempDir();
        ctl = RankDirectory.CONTROL_FILE.in(dir);
    }

    @AfterEach
    void cleanUp() throws Exception {
        if (server != null) {
            server.close();
        }
        if (handler != null) {
            handler.close();
        }
        ShmTestSupport.deleteTree(dir);
    }
}
