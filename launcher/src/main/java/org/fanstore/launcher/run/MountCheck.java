package org.fanstore.launcher.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Whether a --mount prefix may cover what is there. Under the shim the prefix replaces whatever the real file
 * system holds at that path for the user's command: a mount over a directory with files in it (or over a system
 * directory, even an empty one, such as /tmp or /run) would silently hide them from the job, so it is refused.
 * A missing path, or a directory holding nothing but empty directories, is fine.
 */
final class MountCheck {
    /** Directories that programs rely on whether or not they are empty at this moment. */
    private static final Set<String> SYSTEM = Set.of("/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32",
            "/lib64", "/libx32", "/media", "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp",
            "/usr", "/var", "/dev/shm", "/var/tmp", "/usr/bin", "/usr/lib", "/usr/local");

    private MountCheck() {
    }

    /** Why mount must not be used, or null when it may. mount is absolute, without a trailing '/'. */
    static String problem(String mount) {
        Path p = Path.of(mount).normalize();
        if (!p.toString().equals(mount)) {
            return "--mount must be a plain absolute path (no '.', '..' or '//'), got '" + mount + "'";
        }
        if (SYSTEM.contains(mount)) {
            return "--mount " + mount + " would hide the system directory " + mount + " from the command: choose"
                    + " an unused path such as /fanstore";
        }
        if (Files.exists(p, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
            return "--mount " + mount + " is an existing file or link: choose an unused path such as /fanstore";
        }
        if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
            try (Stream<Path> entries = Files.list(p)) {
                if (entries.anyMatch(e -> !emptyDirectory(e))) {
                    return "--mount " + mount + " is a directory with files in it, which the command would no"
                            + " longer see: choose an empty or unused path such as /fanstore";
                }
            } catch (IOException e) {
                return "--mount " + mount + " cannot be checked (" + e.getMessage() + "): choose a path such as"
                        + " /fanstore";
            }
        }
        return null;
    }

    /** Empty placeholders (a site's /fanstore/imagenet made for realpath's sake) hide nothing. */
    private static boolean emptyDirectory(Path p) {
        if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        try (Stream<Path> entries = Files.list(p)) {
            return entries.findAny().isEmpty();
        } catch (IOException e) {
            return false;
        }
    }
}
