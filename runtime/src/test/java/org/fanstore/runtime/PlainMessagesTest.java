package org.fanstore.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Issue 35: no Java class name reaches a user, even inside a message that carries its causes' names. */
class PlainMessagesTest {
    @Test
    void mpjsChainOfClassNamesBecomesWords() {
        assertEquals("rank 0: fetch of object 7 from rank 1: the connection was closed",
                PlainMessages.plain("rank 0: fetch of object 7 from rank 1: mpi.MPIException: "
                        + "xdev.XDevException: java.nio.channels.ClosedChannelException"));
    }

    @Test
    void aQualifiedNameBeforeItsMessageIsDroppedAndPlainTextIsKept() {
        assertEquals("cannot bind: Address already in use",
                PlainMessages.plain("cannot bind: java.net.BindException: Address already in use"));
        String plain = "/data/train.fs/part-00001.fsp: 12 bytes, the manifest says 40 (truncated)";
        assertEquals(plain, PlainMessages.plain(plain));
        assertEquals("socket failure", PlainMessages.plain("a.b.SocketException"));
    }

    @Test
    void theRuntimesStderrFilterTakesClassNamesOutOfEveryLine() {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        PrintStream saved = System.err;
        try {
            System.setErr(new PrintStream(sink, true, StandardCharsets.UTF_8));
            TraceFilter.install("fanstore rank 1: ");
            System.err.println("rank 1: rank 0 failed: mpi.MPIException: xdev.XDevException: "
                    + "java.nio.channels.ClosedChannelException");
            System.err.println("mpi.MPIException: xdev.XDevException: java.io.EOFException");
            System.err.println("\tat mpi.Comm.recv(Comm.java:1)");
        } finally {
            System.setErr(saved);
        }
        assertEquals("rank 1: rank 0 failed: the connection was closed\n"
                + "fanstore rank 1: unexpected end of data\n", sink.toString(StandardCharsets.UTF_8));
    }
}
