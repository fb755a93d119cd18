package org.fanstore.runtime;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The runtime's stderr as the user reads it: MPJ Express prints stack traces of its own (a refused connection,
 * a peer gone) that name Java classes and say nothing a user can act on. Frame lines are dropped and an
 * exception line keeps only its message, prefixed with the rank; class names inside any line are taken out
 * ({@link PlainMessages}); FANSTORE_DEBUG=1 passes everything through.
 */
final class TraceFilter extends OutputStream {
    private static final Pattern FRAME = Pattern.compile("^\\s+(at |\\.\\.\\. \\d+ more)");
    private static final Pattern THROWN = Pattern.compile(
            "^(?:Caused by: |Exception in thread \"[^\"]*\" )?(?:[a-zA-Z_$][\\w$]*\\.)+([\\w$]*(?:Exception|Error))"
                    + "(?:: (.*))?$");

    private final PrintStream out;
    private final String prefix;
    private final StringBuilder line = new StringBuilder();
    private final java.io.ByteArrayOutputStream pending = new java.io.ByteArrayOutputStream();

    private TraceFilter(PrintStream out, String prefix) {
        this.out = out;
        this.prefix = prefix;
    }

    /** Installs the filter on System.err unless debugging. */
    static void install(String prefix) {
        if (System.getenv("FANSTORE_DEBUG") == null) {
            System.setErr(new PrintStream(new TraceFilter(System.err, prefix), true, StandardCharsets.UTF_8));
        }
    }

    @Override
    public synchronized void write(int b) {
        if (b != '\n') {
            pending.write(b);
            return;
        }
        line.setLength(0);
        line.append(pending.toString(StandardCharsets.UTF_8));
        pending.reset();
        String text = line.toString();
        if (FRAME.matcher(text).find()) {
            return;
        }
        Matcher m = THROWN.matcher(text);
        if (m.matches()) {
            String message = m.group(2);
            out.println(prefix + (message == null || message.isBlank() ? PlainMessages.words(m.group(1))
                    : PlainMessages.plain(message)));
            return;
        }
        out.println(PlainMessages.plain(text));
    }

    @Override
    public synchronized void flush() {
        out.flush();
    }
}
