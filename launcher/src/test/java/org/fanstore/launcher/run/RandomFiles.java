package org.fanstore.launcher.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import java.util.function.IntFunction;

/** Trees of random (incompressible, so stored raw) files, with the SHA-256 a reader through the shim must see. */
final class RandomFiles {
    private RandomFiles() {
    }

    /**
     * Writes {@code count} files of {@code bytes} random bytes (from {@code seed}) at {@code src/relative(i)}, and puts
     * {@code mount/relative(i)} -> SHA-256 hex of each into {@code sums}.
     */
    static void write(Path src, String mount, int count, int bytes, long seed, IntFunction<String> relative,
                      Map<String, String> sums) throws IOException {
        Random rnd = new Random(seed);
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        for (int i = 0; i < count; i++) {
            byte[] body = new byte[bytes];
            rnd.nextBytes(body);
            Path f = src.resolve(relative.apply(i));
            Files.createDirectories(f.getParent());
            Files.write(f, body);
            sums.put(mount + "/" + relative.apply(i), HexFormat.of().formatHex(sha.digest(body)));
        }
    }
}
