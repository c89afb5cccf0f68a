package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LoaderTest {
    private static final String LIBRARY = System.mapLibraryName(NativeLibrary.LIBRARY);

    /** The jar's library for this platform, copied to {@code file}. */
    private static void copyLibrary(Path file) throws Exception {
        try (InputStream in = NativeLibrary.class.getResourceAsStream(NativeLibrary.resource(NativeLibrary.platform()))) {
            assertNotNull(in);
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private static List<String> names(Path dir) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        }
    }

    private static String line(String output, String prefix) {
        for (String line : output.split("\n")) {
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length()).trim();
            }
        }
        return null;
    }

    @Test
    void theBuildPacksTheLibraryWhereTheLoaderLooks() {
        String resource = NativeLibrary.resource(NativeLibrary.platform());
        assertNotNull(NativeLibrary.class.getResource(resource), resource);
        assertTrue(NativeLibrary.carried().contains(NativeLibrary.platform()), NativeLibrary.carried().toString());
        assertFalse(NativeLibrary.version().contains("$"), NativeLibrary.version());
    }

    @Test
    void anUnknownPlatformIsNamedInTheError() throws Exception {
        String out = ChildJvm.run(LoaderProbe.class, "-Dos.arch=sparc64");
        assertTrue(out.startsWith("error "), out);
        assertTrue(out.contains(NativeLibrary.platform().replaceAll("-.*", "") + "-sparc64"), out);
        assertTrue(out.contains("-D" + NativeLibrary.PATH_PROPERTY + "="), out);
        assertTrue(out.contains("it carries [" + NativeLibrary.platform()), out);
    }

    @Test
    void thePathPropertyOverridesTheJar(@TempDir Path dir) throws Exception {
        copyLibrary(dir.resolve(LIBRARY));
        // Another platform name, but an explicit library (or its folder): it loads.
        String out = ChildJvm.run(LoaderProbe.class, "-Dos.arch=sparc64", "-D" + NativeLibrary.PATH_PROPERTY + "=" + dir);
        assertEquals("loaded 100", out.split("\n")[0], out);
        String missing = ChildJvm.run(LoaderProbe.class, "-D" + NativeLibrary.PATH_PROPERTY + "=/nonexistent/libsds_jni.so");
        assertTrue(missing.startsWith("error ") && missing.contains("/nonexistent/libsds_jni.so"), missing);
    }

    /**
     * Another user pre-created the folder a loader might predict, open to all,
     * holding their library (here a byte-equal copy, which a loader that checks
     * only the bytes would take). It must never be loaded.
     */
    @Test
    void aPlantedLibraryIsNeverLoaded(@TempDir Path tmp) throws Exception {
        assumeTrue(Files.isReadable(Paths.get("/proc/self/maps")), "needs /proc/self/maps to see what is mapped");
        String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9_.-]", "_");
        List<Path> planted = new ArrayList<>();
        for (String name : new String[] {"sds-native-" + NativeLibrary.version() + "-" + user, "sds-native-"}) {
            Path dir = Files.createDirectory(tmp.resolve(name));
            copyLibrary(dir.resolve(LIBRARY));
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
            Files.setPosixFilePermissions(dir.resolve(LIBRARY), PosixFilePermissions.fromString("rwxrwxrwx"));
            planted.add(dir);
        }
        Path link = Files.createSymbolicLink(tmp.resolve("sds-native-link"), planted.get(0));
        List<String> before = names(tmp);

        String out = ChildJvm.run(LoaderProbe.class, "-Djava.io.tmpdir=" + tmp);

        assertEquals("loaded 100", out.split("\n")[0], out);
        String mapped = line(out, "mapped ");
        assertNotNull(mapped, out);
        for (Path dir : planted) {
            assertFalse(mapped.startsWith(dir + "/"), "loaded the planted " + mapped);
        }
        assertFalse(mapped.startsWith(link + "/"), mapped);
        assertTrue(mapped.startsWith(tmp.toString() + "/sds-native-") && mapped.endsWith(LIBRARY + " (deleted)"),
                "loaded from its own folder, deleted once loaded: " + mapped);
        assertEquals(before, names(tmp), "nothing left behind, nothing planted touched");
        for (Path dir : planted) {
            byte[] expected;
            try (InputStream in = NativeLibrary.class.getResourceAsStream(NativeLibrary.resource(NativeLibrary.platform()))) {
                expected = readAll(in);
            }
            assertArrayEquals(expected, Files.readAllBytes(dir.resolve(LIBRARY)));
        }
    }

    @Test
    void aTmpdirOthersMayRenameInIsRefused(@TempDir Path parent) throws Exception {
        assumeTrue(Files.getFileStore(parent).supportsFileAttributeView("posix"));
        Path tmp = Files.createDirectory(parent.resolve("shared"));
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxrwxrwx"));
        String out = ChildJvm.run(LoaderProbe.class, "-Djava.io.tmpdir=" + tmp);
        assertTrue(out.startsWith("error ") && out.contains("no sticky bit")
                && out.contains(NativeLibrary.PATH_PROPERTY), out);
        assertEquals(new ArrayList<String>(), names(tmp));
    }

    private static byte[] readAll(InputStream in) throws Exception {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        byte[] buf = new byte[1 << 16];
        for (int n; (n = in.read(buf)) > 0; ) {
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }
}
