package org.fanstore.launcher.startup;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * The runtime JVM's class archive: the key that says which archive fits a runtime about to start, and the flags
 * that make it map that archive. An archive that does not fit is never passed (see README.md: a static archive
 * that fails to validate turns sharing off altogether).
 */
public final class ClassArchive {
    static final String PREFIX = "runtime-";
    static final String SUFFIX = ".jsa";
    private static final List<String> USER_SHARING = List.of("-Xshare", "SharedArchiveFile", "ArchiveClassesAtExit",
            "DumpLoadedClassList", "SharedClassListFile");

    private ClassArchive() {
    }

    /** Where the build puts archives: {@code cds/} beside the launcher's jar (or its classes directory). */
    public static Optional<Path> directory() {
        try {
            Path code = Path.of(ClassArchive.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path parent = code.getParent();
            return parent == null ? Optional.empty() : Optional.of(parent.resolve("cds"));
        } catch (URISyntaxException | SecurityException | NullPointerException e) {
            return Optional.empty();
        }
    }

    /**
     * The flags to add for a runtime started with {@code buildFlags} (the build's runtime set, without the user's)
     * and {@code classPath}: the archive's when one with this key exists in {@code dir}, else none; none either
     * when the user's own options choose sharing.
     */
    public static List<String> flags(Optional<Path> dir, List<String> buildFlags, String classPath, String userOpts) {
        if (dir.isEmpty() || USER_SHARING.stream().anyMatch(userOpts::contains)) {
            return List.of();
        }
        Path archive = dir.get().resolve(PREFIX + key(javaHome(), vmVersion(), buildFlags, classPath) + SUFFIX);
        if (!Files.isRegularFile(archive)) {
            return List.of();
        }
        return List.of("-XX:SharedArchiveFile=" + archive, "-Xshare:auto", "-Xlog:cds=off");
    }

    /**
     * What makes an archive valid for a JVM, hashed: the Java home, the VM version, the JVM flags and the class
     * path with each entry's size and modification time (an entry that cannot be read counts as absent).
     */
    static String key(String javaHome, String vmVersion, List<String> jvmFlags, String classPath) {
        StringBuilder what = new StringBuilder();
        what.append("home=").append(javaHome).append('\n').append("vm=").append(vmVersion).append('\n');
        what.append("flags=").append(String.join(" ", jvmFlags)).append('\n');
        for (String entry : classPath.split(File.pathSeparator)) {
            what.append("cp=").append(entry);
            try {
                BasicFileAttributes a = Files.readAttributes(Path.of(entry), BasicFileAttributes.class);
                what.append(' ').append(a.size()).append(' ').append(a.lastModifiedTime().toMillis());
            } catch (IOException | RuntimeException e) {
                what.append(" absent");
            }
            what.append('\n');
        }
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(what.toString().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from this JDK", e);
        }
    }

    static String javaHome() {
        return System.getProperty("java.home", "");
    }

    static String vmVersion() {
        return System.getProperty("java.vm.version", "");
    }
}
