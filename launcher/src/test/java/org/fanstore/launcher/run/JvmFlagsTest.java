package org.fanstore.launcher.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The flag sets the build wrote from the root pom: complete, accepted by a real JVM, and extended by the user's. */
class JvmFlagsTest {
    private static final String AGRONA_EXPORT = "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED";

    @ParameterizedTest
    @ValueSource(strings = {"launcher", "runtime"})
    void eachSetIsFilledInAndStartsAJvm(String set) throws Exception {
        String flags = JvmFlags.build(set);
        assertTrue(flags.contains(AGRONA_EXPORT), set + ": " + flags);
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(List.of(flags.trim().split("\\s+")));
        cmd.add("-version");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), set + " flags refused by the JVM: " + out);
    }

    @Test
    void runtimeJvmsGetTheBuildSetThenTheUsersFlags() {
        List<String> build = List.of(JvmFlags.build("runtime").trim().split("\\s+"));
        List<String> flags = JvmFlags.runtime(Map.of("FANSTORE_RUNTIME_JAVA_OPTS", " -Xmx8g  -XX:+UseG1GC "));
        assertEquals(build, flags.subList(0, build.size()));
        assertEquals(List.of("-Xmx8g", "-XX:+UseG1GC"), flags.subList(build.size(), flags.size()));
        assertEquals(build, JvmFlags.runtime(Map.of()));
    }
}
