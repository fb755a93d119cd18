package org.fanstore.prep.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real socket server in front of S3Proxy: the first {@code refusals} connections get HTTP 503 SlowDown (the
 * request read, then the connection closed), every later one is piped to S3Proxy byte for byte. Not a mock of the
 * client: the SDK talks HTTP to it as to any store.
 */
final class SlowDownProxy implements AutoCloseable {
    private static final String BODY =
            "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>Reduce your rate.</Message></Error>";
    private static final byte[] SLOW_DOWN = ("HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\n"
            + "Content-Length: " + BODY.length() + "\r\nConnection: close\r\n\r\n" + BODY)
            .getBytes(StandardCharsets.US_ASCII);

    private final ServerSocket server;
    private final int target;
    private final int refusals;
    private final AtomicInteger refused = new AtomicInteger();

    SlowDownProxy(int target, int refusals) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.target = target;
        this.refusals = refusals;
        Thread t = new Thread(this::accept, "slowdown-proxy");
        t.setDaemon(true);
        t.start();
    }

    URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getLocalPort());
    }

    int refused() {
        return refused.get();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket c = server.accept();
                if (refused.get() < refusals) {
                    refused.incrementAndGet();
                    refuse(c);
                } else {
                    Socket s = new Socket(InetAddress.getLoopbackAddress(), target);
                    pipe(c, s);
                    pipe(s, c);
                }
            } catch (IOException e) {
                return;
            }
        }
    }

    private static void refuse(Socket c) throws IOException {
        try (c) {
            InputStream in = c.getInputStream();
            int matched = 0;
            while (matched < 4) {   // the request head ends with CRLF CRLF; HEAD and GET have no body
                int b = in.read();
                if (b < 0) {
                    return;
                }
                matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
            }
            OutputStream out = c.getOutputStream();
            out.write(SLOW_DOWN);
            out.flush();
        }
    }

    private static void pipe(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                in.transferTo(out);
            } catch (IOException e) {
                // either side closed
            } finally {
                try {
                    to.close();
                    from.close();
                } catch (IOException e) {
                    // closing
                }
            }
        }, "slowdown-pipe");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
