package org.fanstore.prep.store;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One real S3-compatible server for a test class: S3Proxy 2.7.0 (filesystem back end) as a process of its own, on a
 * free loopback port, with generated credentials and a fresh bucket. Its class path is tests/s3/target/s3proxy-lib
 * (the build copies it there; its jars never share a class path with the SDK). Every file under
 * {@link #bucketDir()} is an object at once, so tests can lay large objects down without uploading them.
 */
public final class S3ProxyServer implements AutoCloseable {
    private static final long START_BOUND_MS = 30_000;

    private final Path dir;
    private final int port;
    private final String accessKey;
    private final String secretKey;
    private final String bucket;
    private Process process;

    private S3ProxyServer(Path dir, int port) throws IOException {
        this.dir = dir;
        this.port = port;
        SecureRandom r = new SecureRandom();
        this.accessKey = hex(r, 12);
        this.secretKey = hex(r, 24);
        this.bucket = "fanstore-" + hex(r, 4);
        Files.createDirectories(bucketDir());
    }

    /** Starts a server in a fresh directory under dir (a @TempDir), with an empty bucket {@link #bucket()}. */
    public static S3ProxyServer start(Path dir) throws IOException {
        S3ProxyServer s = new S3ProxyServer(dir, freePort());
        s.startProcess();
        return s;
    }

    private static String hex(SecureRandom r, int bytes) {
        byte[] b = new byte[bytes];
        r.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        }
    }

    /** The class path directory the build made. */
    public static Path lib() {
        String repo = System.getProperty("fanstore.repo", ".");
        Path lib = Path.of(repo, "tests", "s3", "target", "s3proxy-lib");
        if (!Files.isDirectory(lib)) {
            throw new IllegalStateException("no " + lib + ": build tests/s3 first (mvn -B -q -DskipTests package)");
        }
        return lib;
    }

    private void startProcess() throws IOException {
        Path props = dir.resolve("s3proxy.properties");
        Files.writeString(props, String.join("\n",
                "s3proxy.endpoint=http://127.0.0.1:" + port,
                "s3proxy.authorization=aws-v2-or-v4",
                "s3proxy.identity=" + accessKey,
                "s3proxy.credential=" + secretKey,
                "jclouds.provider=filesystem",
                "jclouds.filesystem.basedir=" + dir.resolve("data")) + "\n");
        Path logback = dir.resolve("logback.xml");
        Files.writeString(logback, "<configuration><appender name=\"o\" class=\"ch.qos.logback.core.ConsoleAppender\">"
                + "<encoder><pattern>%d %-5level %logger{20} %msg%n</pattern></encoder></appender>"
                + "<root level=\"WARN\"><appender-ref ref=\"o\"/></root></configuration>\n");
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        process = new ProcessBuilder(java.toString(), "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dlogback.configurationFile=" + logback, "-cp", lib() + "/*", "org.gaul.s3proxy.Main",
                "--properties", props.toString())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("s3proxy.log").toFile()))
                .start();
        long deadline = System.currentTimeMillis() + START_BOUND_MS;
        while (System.currentTimeMillis() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("S3Proxy exited at start: see " + dir.resolve("s3proxy.log"));
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                sleep(100);
            }
        }
        kill();
        throw new IOException("S3Proxy not listening on 127.0.0.1:" + port + " within " + START_BOUND_MS + " ms");
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + port);
    }

    public int port() {
        return port;
    }

    public String accessKey() {
        return accessKey;
    }

    public String secretKey() {
        return secretKey;
    }

    public String bucket() {
        return bucket;
    }

    /** The bucket's directory: a file laid down below it is an object. */
    public Path bucketDir() {
        return dir.resolve("data").resolve(bucket);
    }

    /** Settings for this server (default timing). */
    public ObjectStore.Settings settings() {
        return ObjectStore.Settings.of(endpoint(), accessKey, secretKey);
    }

    /** The environment a child process needs to reach this server. */
    public java.util.Map<String, String> environment() {
        return java.util.Map.of("AWS_ENDPOINT_URL", endpoint().toString(), "AWS_ACCESS_KEY_ID", accessKey,
                "AWS_SECRET_ACCESS_KEY", secretKey, "AWS_REGION", "us-east-1");
    }

    /**
     * Uploads every file of a dataset directory (what prep wrote locally) as {@code KEY/FILE} in this server's
     * bucket, one object each, in listing order; returns the bytes uploaded.
     */
    public long upload(ObjectStore store, Path datasetDir, String key) throws IOException {
        long bytes = 0;
        try (Stream<Path> files = Files.list(datasetDir)) {
            for (Path f : files.toList()) {
                store.upload(bucket, key + "/" + f.getFileName(), f);
                bytes += Files.size(f);
            }
        }
        return bytes;
    }

    /** A test class's @AfterAll: closes its client, then its server; either may be null (a failed @BeforeAll). */
    public static void stop(ObjectStore store, S3ProxyServer server) {
        if (store != null) {
            store.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** Kills the server at once (SIGKILL), as a crash would. */
    public void kill() {
        if (process != null) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Stops the server's process (SIGSTOP) without closing anything: its port still accepts connections (the
     * kernel's backlog) and nothing is ever answered, as a store that hangs. {@link #resume} undoes it.
     */
    public void pause() throws IOException {
        signal("-STOP");
    }

    /** Lets a paused server run again (SIGCONT): it answers what it was sent meanwhile. */
    public void resume() throws IOException {
        signal("-CONT");
    }

    private void signal(String which) throws IOException {
        try {
            Process k = new ProcessBuilder("kill", which, Long.toString(process.pid())).inheritIO().start();
            if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
                throw new IOException("kill " + which + " " + process.pid() + " failed");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while signalling S3Proxy", e);
        }
    }

    /** Starts it again on the same port and directory (after {@link #kill}). */
    public void restart() throws IOException {
        kill();
        startProcess();
    }

    @Override
    public void close() {
        kill();
    }
}
