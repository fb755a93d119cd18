package org.fanstore.runtime.membership;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Set;

/**
 * The per-job secret every remote-fetch request carries (see {@link FetchProtocol}): niodev listens on all
 * interfaces and MPJ has no authentication, so this is what tells a rank of the job from any process that
 * can reach its ports. It only ever travels in files only the user can read (0600, in the job's private
 * directory, or briefly in the user's rendezvous directory under a scheduler), never on a command line,
 * which every user can read in /proc.
 */
public final class JobSecret {
    /** 256 bits: guessing is hopeless, and a request grows by only 32 bytes. */
    public static final int BYTES = 32;

    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

    private final byte[] bytes;

    private JobSecret(byte[] bytes) {
        this.bytes = bytes;
    }

    /** A fresh secret from the platform's strong random source. */
    public static JobSecret generate() {
        byte[] b = new byte[BYTES];
        new SecureRandom().nextBytes(b);
        return new JobSecret(b);
    }

    /** For tests that play a rogue rank: a secret with exactly these bytes. */
    public static JobSecret of(byte[] bytes) {
        if (bytes.length != BYTES) {
            throw new IllegalArgumentException("a job secret has " + BYTES + " bytes, got " + bytes.length);
        }
        return new JobSecret(bytes.clone());
    }

    /**
     * Reads a secret file, refusing one anybody else could have read or planted: it must be a regular file
     * (not a symlink) of this user with no group or other permission bits, holding exactly {@link #BYTES} bytes.
     */
    public static JobSecret read(Path file) throws IOException {
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException("the job secret " + file + " is missing or not a regular file");
        }
        int owner = (Integer) Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int mode = (Integer) Files.getAttribute(file, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        if (owner != currentUid() || (mode & 077) != 0) {
            throw new IOException("the job secret " + file + " must belong to this user and be readable by nobody"
                    + " else (mode " + Integer.toOctalString(mode & 0777) + ", owner uid " + owner + ")");
        }
        byte[] b = Files.readAllBytes(file);
        if (b.length != BYTES) {
            throw new IOException("the job secret " + file + " has " + b.length + " bytes, not " + BYTES);
        }
        return new JobSecret(b);
    }

    /**
     * Writes the secret to {@code file} with mode 0600 from the first byte on (created under a temporary name
     * with that mode, then renamed), replacing any file there.
     */
    public Path writePrivate(Path file) throws IOException {
        Path temp = Files.createTempFile(file.getParent(), ".fanstore-secret-", ".tmp",
                PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        try {
            Files.write(temp, bytes);
            try {
                Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(temp);
        }
        return file;
    }

    /** Whether {@code message[offset, offset + BYTES)} is this secret; the time taken does not depend on where
     * the first difference lies, so a remote peer cannot learn the secret byte by byte from reply timings. */
    public boolean matches(byte[] message, int offset) {
        if (message.length < offset + BYTES) {
            return false;
        }
        return MessageDigest.isEqual(bytes, Arrays.copyOfRange(message, offset, offset + BYTES));
    }

    /** HMAC-SHA256 of the concatenated {@code parts} keyed with this secret (the join's proof: JoinProtocol). */
    public byte[] mac(byte[]... parts) {
        try {
            javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
            mac.init(new javax.crypto.spec.SecretKeySpec(bytes, "HmacSHA256"));
            for (byte[] part : parts) {
                mac.update(part);
            }
            return mac.doFinal();
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java platform", e);
        }
    }

    public void copyInto(byte[] message, int offset) {
        System.arraycopy(bytes, 0, message, offset, BYTES);
    }

    private static int currentUid() throws IOException {
        return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    }

    @Override
    public String toString() {
        return "JobSecret[" + BYTES + " bytes, not shown]";
    }
}
