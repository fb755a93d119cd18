package org.fanstore.launcher.startup;

import java.io.File;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.fanstore.launcher.run.JvmFlags;

/**
 * Build step (the launcher module's package phase): dumps the runtime's class archive for the class path this JVM
 * was started with, which is the one the fanstore script gives the launcher and the launcher its runtimes. Usage:
 * {@code ClassArchiveDump CLASSLIST OUTDIR}. Never fails the build: without an archive runtimes start as before.
 */
public final class ClassArchiveDump {
    private static final long DUMP_SECONDS = 180;

    private ClassArchiveDump() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ClassArchiveDump CLASSLIST OUTDIR");
            System.exit(2);
        }
        String why = dump(Path.of(args[0]), Path.of(args[1]), canonicalDirs(System.getProperty("java.class.path")));
        System.out.println(why);
    }

    /** Dumps into {@code outDir}; returns one line saying what was made or why not. */
    static String dump(Path classList, Path outDir, String classPath) throws IOException, InterruptedException {
        if (!Files.isRegularFile(classList)) {
            return "class archive not made: " + classList + " is missing; runtimes start without one";
        }
        Files.createDirectories(outDir);
        List<String> flags = JvmFlags.buildRuntime();
        String name = ClassArchive.PREFIX + ClassArchive.key(ClassArchive.javaHome(), ClassArchive.vmVersion(),
                flags, classPath) + ClassArchive.SUFFIX;
        Path tmp = outDir.resolve(name + ".tmp");
        Path log = outDir.resolve("dump.log");
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(flags);
        cmd.addAll(List.of("-Xshare:dump", "-XX:SharedClassListFile=" + classList.toAbsolutePath(),
                "-XX:SharedArchiveFile=" + tmp, "-cp", classPath));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(DUMP_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            Files.deleteIfExists(tmp);
            return "class archive not made: the dump ran over " + DUMP_SECONDS + " s (" + log + ")";
        }
        if (p.exitValue() != 0 || !Files.isRegularFile(tmp)) {
            Files.deleteIfExists(tmp);
            return "class archive not made: java -Xshare:dump exited " + p.exitValue() + " (" + log + ")";
        }
        String glob = ClassArchive.PREFIX + "*" + ClassArchive.SUFFIX;
        try (DirectoryStream<Path> old = Files.newDirectoryStream(outDir, glob)) {
            for (Path o : old) {
                Files.deleteIfExists(o);
            }
        }
        Files.move(tmp, outDir.resolve(name), StandardCopyOption.ATOMIC_MOVE);
        return "class archive " + outDir.resolve(name) + " (" + (Files.size(outDir.resolve(name)) >> 20) + " MiB)";
    }

    /**
     * Each class path entry with its directory made canonical (the fanstore script resolves its own directory
     * with readlink -f), the file name kept: a symlinked jar such as /usr/share/java/mpj.jar stays as named.
     */
    static String canonicalDirs(String classPath) throws IOException {
        List<String> out = new ArrayList<>();
        for (String entry : classPath.split(File.pathSeparator)) {
            Path p = Path.of(entry).toAbsolutePath();
            Path parent = p.getParent();
            out.add(parent != null && Files.isDirectory(parent)
                    ? parent.toRealPath().resolve(p.getFileName()).toString() : p.toString());
        }
        return String.join(File.pathSeparator, out);
    }
}
