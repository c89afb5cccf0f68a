package io.sdsnative;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;

/**
 * Finds and loads the JNI library. The jar carries one library per platform
 * it was built for under {@code io/sdsnative/native/<os>-<arch>/}. A JVM can
 * only load a library from a file, so each JVM writes it to a fresh folder
 * that only its user can open (created with mode 0700 under
 * {@code java.io.tmpdir}, with a random name), checks folder and file, loads
 * that file and deletes both: a loaded library stays mapped, and no other
 * user can ever put a file where the loader looks.
 */
final class NativeLibrary {
    /** A file (or folder holding the library) to load instead of the jar's. */
    static final String PATH_PROPERTY = "sds.native.library.path";
    static final String LIBRARY = "sds_jni";

    private NativeLibrary() {}

    /** The platform folders a build can fill (the Maven profiles use the same names). */
    static final List<String> PLATFORMS = Arrays.asList("linux-x86_64", "linux-aarch64", "macos-x86_64", "macos-aarch64");

    private static final Set<PosixFilePermission> OWNER_ONLY = EnumSet.of(
            PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);
    private static final Set<PosixFilePermission> OWNER_READ_WRITE = EnumSet.of(
            PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;

    static void load() {
        String override = System.getProperty(PATH_PROPERTY);
        if (override != null && !override.isEmpty()) {
            System.load(overrideFile(override).getAbsolutePath());
            return;
        }
        String resource = resource(platform());
        byte[] library = readResource(resource);
        if (library == null) {
            throw new UnsatisfiedLinkError("sds-native has no native library for this platform, "
                    + platform() + " (os.name=" + System.getProperty("os.name") + ", os.arch="
                    + System.getProperty("os.arch") + "): the jar has no " + resource
                    + " (it carries " + carried() + "). Build the library for this platform"
                    + " (cargo build --release -p sds-jni) and pass its path with -D" + PATH_PROPERTY
                    + "=..., or add it to the jar (see jvm/README.md)");
        }
        try {
            loadPrivateCopy(library);
        } catch (IOException e) {
            UnsatisfiedLinkError error = new UnsatisfiedLinkError("sds-native could not write its native library"
                    + " to a private folder under java.io.tmpdir=" + System.getProperty("java.io.tmpdir")
                    + ": " + e + ". Set java.io.tmpdir, or pass a library with -D" + PATH_PROPERTY + "=...");
            error.initCause(e);
            throw error;
        }
    }

    static String resource(String platform) {
        return "/io/sdsnative/native/" + platform + "/" + System.mapLibraryName(LIBRARY);
    }

    /** The platforms this jar has a library for. */
    static List<String> carried() {
        List<String> found = new ArrayList<>();
        for (String platform : PLATFORMS) {
            if (NativeLibrary.class.getResource(resource(platform)) != null) {
                found.add(platform);
            }
        }
        return found;
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

    /** The jar's version, for messages. */
    static String version() {
        Properties properties = new Properties();
        try (InputStream in = NativeLibrary.class.getResourceAsStream("sds-native.properties")) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            // Only messages show the version.
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

    /** Writes the library to a fresh private folder, loads it from there, deletes both. */
    private static void loadPrivateCopy(byte[] library) throws IOException {
        Path tmp = Paths.get(System.getProperty("java.io.tmpdir"));
        boolean posix = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
        if (posix) {
            refuseSharedUnstickyFolder(tmp);
        }
        // mkdir with a random name: fails rather than reuse anything that exists.
        Path dir = posix
                ? Files.createTempDirectory(tmp, "sds-native-", PosixFilePermissions.asFileAttribute(OWNER_ONLY))
                : Files.createTempDirectory(tmp, "sds-native-");
        Path file = dir.resolve(System.mapLibraryName(LIBRARY));
        try {
            // CREATE_NEW: O_EXCL, which also refuses a symbolic link.
            Set<StandardOpenOption> create = EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            try (SeekableByteChannel out = posix
                    ? Files.newByteChannel(file, create, PosixFilePermissions.asFileAttribute(OWNER_READ_WRITE))
                    : Files.newByteChannel(file, create)) {
                ByteBuffer bytes = ByteBuffer.wrap(library);
                while (bytes.hasRemaining()) {
                    out.write(bytes);
                }
            }
            if (posix) {
                checkPrivate(dir, file, library.length);
            }
            System.load(file.toAbsolutePath().toString());
        } finally {
            // POSIX unlinks a loaded library's file and keeps the mapping; where
            // the system refuses (Windows), the JVM deletes them at exit.
            deleteNowOrAtExit(file, dir);
        }
    }

    /**
     * A folder others may write that lacks the sticky bit lets them rename our
     * folder away and put theirs in its place: refuse it.
     */
    private static void refuseSharedUnstickyFolder(Path tmp) throws IOException {
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(tmp);
        if (!perms.contains(PosixFilePermission.OTHERS_WRITE) && !perms.contains(PosixFilePermission.GROUP_WRITE)) {
            return;
        }
        int mode;
        try {
            mode = (Integer) Files.getAttribute(tmp, "unix:mode");
        } catch (UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
            return; // No way to read the sticky bit here; the checks below still run.
        }
        if ((mode & 01000) == 0) {
            throw new IOException(tmp + " is writable by other users and has no sticky bit");
        }
    }

    /**
     * The folder and the file must be this process's: not links, owned by
     * one user, open to nobody else, the file of the size written.
     */
    private static void checkPrivate(Path dir, Path file, long size) throws IOException {
        PosixFileAttributes d = Files.readAttributes(dir, PosixFileAttributes.class, NOFOLLOW);
        PosixFileAttributes f = Files.readAttributes(file, PosixFileAttributes.class, NOFOLLOW);
        boolean ok = d.isDirectory() && !d.isSymbolicLink() && OWNER_ONLY.containsAll(d.permissions())
                && f.isRegularFile() && !f.isSymbolicLink() && OWNER_ONLY.containsAll(f.permissions())
                && f.owner().equals(d.owner()) && f.size() == size;
        if (!ok) {
            throw new IOException("the private copy " + file + " changed under the loader (folder "
                    + PosixFilePermissions.toString(d.permissions()) + " of " + d.owner() + ", file "
                    + PosixFilePermissions.toString(f.permissions()) + " of " + f.owner() + ")");
        }
    }

    private static void deleteNowOrAtExit(Path file, Path dir) {
        try {
            Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            dir.toFile().deleteOnExit(); // at exit, the last registered goes first
            file.toFile().deleteOnExit();
        }
    }
}
