package org.fanstore.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import org.junit.jupiter.api.Test;

/** What the user reads when a rank stops on an exception: fanstore's sentences as they are, never the JVM's. */
class FatalMessageTest {
    @Test
    void aBugsJvmWordsNeverReachTheUser() {
        String npe = "Cannot invoke \"java.nio.channels.FileChannel.read(java.nio.ByteBuffer, long)\""
                + " because \"in\" is null";
        for (Throwable t : new Throwable[] {new NullPointerException(npe), new ClassCastException("class a.B cannot"),
            new ArrayIndexOutOfBoundsException(7), new NoClassDefFoundError("org/x/Y"), new StackOverflowError()}) {
            String line = FatalMessage.of(t);
            assertEquals(FatalMessage.BUG, line);
            assertFalse(line.contains("java.") || line.contains("Exception"), line);
        }
    }

    @Test
    void fanstoresOwnSentencesPassOnOneLine() {
        assertEquals("partition p.fsp is short: run fanstore verify x",
                FatalMessage.of(new IOException("partition p.fsp is short:\nrun fanstore verify x")));
        assertEquals("a b", FatalMessage.of(new IllegalStateException("a\nb")));
        assertEquals("internal error without a message (FANSTORE_DEBUG=1 shows where)",
                FatalMessage.of(new IOException((String) null)));
    }
}
