package org.fanstore.runtime;

import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Messages without Java class names. An exception's message often embeds its causes' class names (MPJ's
 * {@code mpi.MPIException: xdev.XDevException: java.nio.channels.ClosedChannelException}); a user can act on none
 * of them. Each qualified exception name followed by ": " is dropped (its message follows), and one without a
 * message becomes words ("the connection was closed").
 */
public final class PlainMessages {
    /** A qualified exception or error class name, and the ": " before its message when it has one. */
    private static final Pattern QUALIFIED = Pattern.compile(
            "(?:[a-zA-Z_$][\\w$]*\\.)+([A-Z][\\w$]*(?:Exception|Error))(: )?");
    /** Names whose words alone would read badly. */
    private static final Map<String, String> KNOWN = Map.of(
            "ClosedChannelException", "the connection was closed",
            "AsynchronousCloseException", "the connection was closed",
            "ConnectException", "connection refused",
            "EOFException", "unexpected end of data",
            "SocketTimeoutException", "timed out",
            "OutOfMemoryError", "out of memory");

    private PlainMessages() {
    }

    /** {@code text} with every qualified exception class name removed or put in words. */
    public static String plain(String text) {
        Matcher m = QUALIFIED.matcher(text);
        StringBuilder sb = new StringBuilder(text.length());
        while (m.find()) {
            m.appendReplacement(sb, m.group(2) != null ? "" : Matcher.quoteReplacement(words(m.group(1))));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    /** "ConnectException" -> "connection refused"; otherwise the class name's words: "bind failure". */
    public static String words(String simpleName) {
        String known = KNOWN.get(simpleName);
        if (known != null) {
            return known;
        }
        String base = simpleName.replaceAll("(Exception|Error)$", "");
        return base.replaceAll("([a-z])([A-Z])", "$1 $2").toLowerCase(Locale.ROOT) + " failure";
    }
}
