package io.sdsnative;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;

/**
 * Finds and loads the JNI library. The jar carries one library per platform
 * under {@code io/sdsnative/native/<os>-<arch>/}; it is extracted once per
 * version to a folder under {@code java.io.tmpdir} (rewritten only when its
 * bytes differ) because a JVM can only load libraries from files.
 */
final class NativeLibrary {
    /** A file (or folder holding the library) to load instead of the jar's. */
    static final String PATH_PROPERTY = "sds.native.library.path";
    static final String LIBRARY = "sds_jni";

    private NativeLibrary() {}

    static void load() {
        String override = System.getProperty(PATH_PROPERTY);
        if (override != null && !override.isEmpty()) {
            System.load(overrideFile(override).getAbsolutePath());
            return;
        }
        String resource = "/io/sdsnative/native/" + platform() + "/" + System.mapLibraryName(LIBRARY);
        byte[] library = readResource(resource);
        if (library == null) {
            throw new UnsatisfiedLinkError("sds-native has no native library for this platform, "
                    + platform() + " (os.name=" + System.getProperty("os.name") + ", os.arch="
                    + System.getProperty("os.arch") + "): the jar has no " + resource
                    + ". Build the library for this platform (cargo build --release -p sds-jni)"
                    + " and pass its path with -D" + PATH_PROPERTY + "=...");
        }
        try {
            System.load(extract(library).getAbsolutePath());
        } catch (IOException e) {
            UnsatisfiedLinkError error = new UnsatisfiedLinkError(
                    "sds-native could not extract its native library: " + e);
            error.initCause(e);
            throw error;
        }
    }

    private static File overrideFile(String path) {
        File file = new File(path);
        return file.isDirectory() ? new File(file, System.mapLibraryName(LIBRARY)) : file;
    }

    /** The platform folder name; the Maven profiles use the same names. */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String osName = os.startsWith("linux") ? "linux"
                : os.startsWith("mac") || os.startsWith("darwin") ? "macos"
                : os.startsWith("windows") ? "windows"
                : os.replaceAll("[^a-z0-9]", "");
        String archName = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64"
                : arch.equals("aarch64") || arch.equals("arm64") ? "aarch64"
                : arch.replaceAll("[^a-z0-9_]", "");
        return osName + "-" + archName;
    }

    static String version() {
        Properties properties = new Properties();
        try (InputStream in = NativeLibrary.class.getResourceAsStream("sds-native.properties")) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            // An unreadable version only costs a shared extraction folder.
        }
        return properties.getProperty("version", "unknown");
    }

    private static byte[] readResource(String resource) {
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                return null;
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buffer = new byte[1 << 16];
            for (int n; (n = in.read(buffer)) > 0; ) {
                out.write(buffer, 0, n);
            }
            return out.toByteArray();
        } catch (IOException e) {
            return null;
        }
    }

    private static File extract(byte[] library) throws IOException {
        String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9_.-]", "_");
        Path dir = new File(System.getProperty("java.io.tmpdir"),
                "sds-native-" + version() + "-" + user).toPath();
        Files.createDirectories(dir);
        Path target = dir.resolve(System.mapLibraryName(LIBRARY));
        if (Files.isRegularFile(target) && Arrays.equals(Files.readAllBytes(target), library)) {
            return target.toFile();
        }
        // Write beside it and move into place, so a concurrent JVM never
        // loads a half-written file.
        Path temp = Files.createTempFile(dir, LIBRARY, ".tmp");
        try {
            Files.write(temp, library);
            Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(temp);
        }
        return target.toFile();
    }
}
