package io.sdsnative;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

/**
 * Run in a child JVM by LoaderTest: loads the library and prints the outcome,
 * then (on Linux) the file the library is mapped from.
 */
public final class LoaderProbe {
    private LoaderProbe() {}

    public static void main(String[] args) throws IOException {
        try {
            System.out.println("loaded " + Strategy.DEFAULT.get("downgradeRate"));
        } catch (UnsatisfiedLinkError e) {
            System.out.println("error " + e.getMessage());
            return;
        }
        String library = System.mapLibraryName(NativeLibrary.LIBRARY);
        if (Files.isReadable(Paths.get("/proc/self/maps"))) {
            for (String line : Files.readAllLines(Paths.get("/proc/self/maps"), StandardCharsets.UTF_8)) {
                int path = line.indexOf('/');
                if (line.contains(library) && path >= 0) {
                    System.out.println("mapped " + line.substring(path));
                    return;
                }
            }
        }
    }
}
