package org.fanstore.launcher.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.fanstore.prep.store.S3ProxyServer;

/**
 * What the {@code s3://} job tests start from, under one work directory: FillStressTest's stress set in
 * {@code src/ds} with its SHA-256 listing {@code sha256.txt}, {@link FillReader} installed, and a real S3Proxy
 * started under {@code s3/}.
 */
record S3Work(Path src, Path listing, Path program, S3ProxyServer server) {
    static S3Work start(Path work, int files, int large, long seed) throws IOException {
        Path src = work.resolve("src/ds");
        Path listing = work.resolve("sha256.txt");
        FillStressTest.stressSet(src, listing, files, large, seed);
        Path program = FillReader.install(work);
        return new S3Work(src, listing, program, S3ProxyServer.start(Files.createDirectories(work.resolve("s3"))));
    }
}
