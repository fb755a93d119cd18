package org.fanstore.prep.store;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real socket server in front of S3Proxy that answers some requests HTTP 503 SlowDown (the request head read, the
 * answer written, the connection closed) and pipes the others to S3Proxy byte for byte. Not a mock of the client:
 * the SDK talks HTTP to it as to any store. This module's test-jar carries it (ObjectStoreTest, the launcher's
 * S3JobFaultsTest).
 *
 * <p>Two ways to throttle: the first {@code refusals} connections ({@link #SlowDownProxy(int, int)}), or
 * ({@link #everyNthGet}) every n-th GET, each request then on a connection of its own ({@code Connection: close} is
 * added to the head passed on, so S3Proxy closes after one answer and the proxy sees every request). {@link
 * #throttleAll} then turns every later request into a 503 and closes the connections in flight.
 */
public final class SlowDownProxy implements AutoCloseable {
    private static final String BODY =
            "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>Reduce your rate.</Message></Error>";
    private static final byte[] SLOW_DOWN = ("HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\n"
            + "Content-Length: " + BODY.length() + "\r\nConnection: close\r\n\r\n" + BODY)
            .getBytes(StandardCharsets.US_ASCII);
    private static final int HEAD_MAX = 64 << 10;

    private final ServerSocket server;
    private final int target;
    private final int refusals;
    private final int nth;
    private final AtomicInteger refused = new AtomicInteger();
    private final AtomicInteger gets = new AtomicInteger();
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger passed = new AtomicInteger();
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile boolean all;

    /** The first {@code refusals} connections get 503 SlowDown, every later one is piped. */
    public SlowDownProxy(int target, int refusals) throws IOException {
        this(target, refusals, 0);
    }

    private SlowDownProxy(int target, int refusals, int nth) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.target = target;
        this.refusals = refusals;
        this.nth = nth;
        Thread t = new Thread(this::accept, "slowdown-proxy");
        t.setDaemon(true);
        t.start();
    }

    /** Every n-th GET (the 1st, the (n+1)-th, ...) gets 503 SlowDown; every request on a connection of its own. */
    public static SlowDownProxy everyNthGet(int target, int n) throws IOException {
        if (n < 1) {
            throw new IllegalArgumentException("n must be >= 1, got " + n);
        }
        return new SlowDownProxy(target, 0, n);
    }

    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getLocalPort());
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Requests answered 503 SlowDown so far. */
    public int refused() {
        return refused.get();
    }

    /** Requests passed on to S3Proxy so far (in the every-n-th mode; connections otherwise). */
    public int passed() {
        return passed.get();
    }

    /** From now on every request gets 503 SlowDown; connections being piped are closed. */
    public void throttleAll() {
        all = true;
        for (Socket s : open) {
            closeQuietly(s);
        }
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket c = server.accept();
                Thread t = new Thread(() -> serve(c), "slowdown-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket c) {
        try {
            byte[] head = nth > 0 || all ? readHead(c.getInputStream()) : null;
            boolean refuse;
            if (all) {
                refuse = true;
            } else if (nth > 0) {
                refuse = head.length > 4 && new String(head, 0, 4, StandardCharsets.US_ASCII).equals("GET ")
                        && gets.getAndIncrement() % nth == 0;
            } else {
                refuse = connections.getAndIncrement() < refusals;
            }
            if (refuse) {
                refused.incrementAndGet();
                if (head == null) {
                    head = readHead(c.getInputStream());
                }
                if (head.length > 0) {
                    c.getOutputStream().write(SLOW_DOWN);
                    c.getOutputStream().flush();
                }
                closeQuietly(c);
                return;
            }
            passed.incrementAndGet();
            Socket s = new Socket(InetAddress.getLoopbackAddress(), target);
            open.add(c);
            open.add(s);
            if (head != null) {
                s.getOutputStream().write(nth > 0 ? closeAfterOne(head) : head);
            }
            pipe(c, s);
            pipe(s, c);
        } catch (IOException e) {
            closeQuietly(c);
        }
    }

    /** The request head up to and with CRLF CRLF (HEAD and GET have no body); empty when the client closed. */
    private static byte[] readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4 && head.size() < HEAD_MAX) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
            matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toByteArray();
    }

    /** The head with its Connection header replaced by {@code Connection: close}. */
    private static byte[] closeAfterOne(byte[] head) {
        String text = new String(head, StandardCharsets.ISO_8859_1);
        String withoutEnd = text.endsWith("\r\n\r\n") ? text.substring(0, text.length() - 2) : text;
        StringBuilder out = new StringBuilder();
        for (String line : withoutEnd.split("\r\n")) {
            if (!line.regionMatches(true, 0, "Connection:", 0, "Connection:".length())) {
                out.append(line).append("\r\n");
            }
        }
        out.append("Connection: close\r\n\r\n");
        return out.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    private void pipe(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                in.transferTo(out);
            } catch (IOException e) {
                // either side closed
            } finally {
                closeQuietly(to);
                closeQuietly(from);
                open.remove(to);
                open.remove(from);
            }
        }, "slowdown-pipe");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : open) {
            closeQuietly(s);
        }
    }
}
