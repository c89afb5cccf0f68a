package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class LoaderTest {
    private static String runProbe(String... properties) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(new File(System.getProperty("java.home"), "bin/java").getPath());
        command.addAll(Arrays.asList(properties));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(LoaderProbe.class.getName());
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = p.getInputStream()) {
            byte[] buf = new byte[4096];
            for (int n; (n = in.read(buf)) > 0; ) {
                out.write(buf, 0, n);
            }
        }
        assertEquals(0, p.waitFor());
        return out.toString("UTF-8").trim();
    }

    @Test
    void theBuildPacksTheLibraryWhereTheLoaderLooks() {
        String resource = "/io/sdsnative/native/" + NativeLibrary.platform() + "/"
                + System.mapLibraryName(NativeLibrary.LIBRARY);
        assertNotNull(NativeLibrary.class.getResource(resource), resource);
        assertFalse(NativeLibrary.version().contains("$"), NativeLibrary.version());
    }

    @Test
    void anUnknownPlatformIsNamedInTheError() throws Exception {
        String out = runProbe("-Dos.arch=sparc64");
        assertTrue(out.startsWith("error "), out);
        assertTrue(out.contains("-sparc64"), out);
        assertTrue(out.contains(NativeLibrary.PATH_PROPERTY), out);
    }

    @Test
    void thePathPropertyOverridesTheJar() throws Exception {
        assertEquals(100, Strategy.DEFAULT.get("downgradeRate"), "this JVM loads from the jar");
        String version = NativeLibrary.version();
        String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9_.-]", "_");
        File extracted = new File(System.getProperty("java.io.tmpdir"), "sds-native-" + version + "-" + user);
        assertTrue(new File(extracted, System.mapLibraryName(NativeLibrary.LIBRARY)).isFile(),
                "this JVM extracted the library to " + extracted);
        // Another platform name, but an explicit library: it loads.
        assertEquals("loaded 100", runProbe("-Dos.arch=sparc64", "-D" + NativeLibrary.PATH_PROPERTY + "=" + extracted));
        String missing = runProbe("-D" + NativeLibrary.PATH_PROPERTY + "=/nonexistent/libsds_jni.so");
        assertTrue(missing.startsWith("error ") && missing.contains("/nonexistent/libsds_jni.so"), missing);
    }
}
