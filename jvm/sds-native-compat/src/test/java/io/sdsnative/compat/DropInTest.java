package io.sdsnative.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DropInTest {
    private static URL codeSource(Class<?> type) {
        return type.getProtectionDomain().getCodeSource().getLocation();
    }

    @Test
    void theDropInIsActiveOnThisClassPath() {
        assertTrue(DropIn.isActive());
        String line = DropIn.describe();
        assertTrue(line.startsWith("sds-native drop-in active: "), line);
        for (String name : DropIn.CLASSES) {
            String simple = name.substring(name.lastIndexOf('.') + 1);
            assertTrue(line.contains(simple + " sds-native from " + codeSource(DropIn.class)), line);
        }
    }

    /** SDS's class first on the class path: a check and a description that say so. */
    @Test
    void sdsOwnClassFirstIsDetected(@TempDir Path dir) throws Exception {
        Path source = dir.resolve("src/com/didiglobal/sds/client/counter/SlidingWindowData.java");
        Files.createDirectories(source.getParent());
        Files.write(source, ("package com.didiglobal.sds.client.counter;\n"
                + "public abstract class SlidingWindowData extends AbstractCycleData { }\n")
                .getBytes(StandardCharsets.UTF_8));
        Path classes = Files.createDirectories(dir.resolve("sds-client"));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "the tests run on a JDK");
        String compat = new File(codeSource(DropIn.class).toURI()).getPath();
        assertEquals(0, javac.run(null, null, null, "-cp", compat, "-d", classes.toString(), source.toString()));

        URL[] path = {classes.toUri().toURL(), codeSource(DropIn.class), codeSource(io.sdsnative.Log.class)};
        try (URLClassLoader loader = new URLClassLoader(path, ClassLoader.getSystemClassLoader().getParent())) {
            Class<?> dropIn = loader.loadClass(DropIn.class.getName());
            Method isActive = dropIn.getMethod("isActive");
            Method describe = dropIn.getMethod("describe");
            assertFalse((Boolean) isActive.invoke(null));
            String line = (String) describe.invoke(null);
            assertTrue(line.startsWith("sds-native drop-in NOT active"), line);
            assertTrue(line.contains("SlidingWindowData SDS from " + classes.toUri().toURL()), line);
            assertTrue(line.contains("ConcurrentData sds-native from "), line);
        }
        assertTrue(DropIn.isActive(), "this class path is unchanged");
    }

    @Test
    void theFirstCounterLogsOnceWhichClassesAreActive() throws Exception {
        String java = new File(System.getProperty("java.home"), "bin/java").getPath();
        Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), DropInLogProbe.class.getName())
                .redirectErrorStream(true).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = p.getInputStream()) {
            byte[] buf = new byte[4096];
            for (int n; (n = in.read(buf)) > 0; ) {
                out.write(buf, 0, n);
            }
        }
        String text = out.toString("UTF-8");
        assertEquals(0, p.waitFor(), text);
        String[] lines = text.trim().split("\n");
        assertEquals("records 1", lines[0], text);
        assertTrue(lines[1].startsWith("INFO sds-native drop-in active: AbstractCycleData sds-native from "), text);
    }
}
