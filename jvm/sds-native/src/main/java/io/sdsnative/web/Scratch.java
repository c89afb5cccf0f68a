package io.sdsnative.web;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import io.sdsnative.Ascii;

/**
 * A thread's direct memory for one native object's hot calls: Java writes
 * the input, the native call reads it and writes its answer by address, so
 * the call makes no JNI callback. One per thread and object (a
 * {@code ThreadLocal}), used by one call at a time.
 */
final class Scratch {
    final ByteBuffer buffer;
    final long address;
    /** Bytes on their way in or out: array stores, then one bulk copy. */
    final byte[] bytes;
    /** The length of the keys a {@link Route} wrote last. */
    int keysLen;

    Scratch(int size) {
        this.buffer = ByteBuffer.allocateDirect(size).order(ByteOrder.nativeOrder());
        this.address = HttpNative.scratchAddress(buffer, size);
        this.bytes = new byte[size];
    }

    /** Copies {@code text} to {@link #bytes} at {@code at} if it is ASCII and fits: its length, or -1. */
    int putAscii(String text, int at, int limit) {
        return Ascii.copy(text, bytes, at, limit);
    }

    /** Copies the first {@code n} bytes of {@link #bytes} to the buffer's start. */
    void flush(int n) {
        buffer.clear();
        buffer.put(bytes, 0, n);
    }

    /** Copies {@code n} bytes of {@link #bytes} at {@code at} to the buffer at {@code at}. */
    void flush(int at, int n) {
        buffer.clear();
        buffer.position(at);
        buffer.put(bytes, at, n);
    }

    /** The {@code n} ASCII bytes of the buffer at {@code at}, as text. */
    String text(int at, int n) {
        buffer.clear();
        buffer.position(at);
        buffer.get(bytes, 0, n);
        return new String(bytes, 0, n, StandardCharsets.ISO_8859_1);
    }

    /** The {@code n} bytes of the buffer at {@code at}, split at each {@code '\n'} (which ends every line). */
    String[] lines(int at, int n) {
        buffer.clear();
        buffer.position(at);
        buffer.get(bytes, 0, n);
        byte[] b = bytes;
        int count = 0;
        for (int i = 0; i < n; i++) {
            if (b[i] == '\n') {
                count++;
            }
        }
        String[] lines = new String[count];
        int start = 0;
        int line = 0;
        for (int i = 0; i < n; i++) {
            if (b[i] == '\n') {
                lines[line++] = new String(b, start, i - start, StandardCharsets.ISO_8859_1);
                start = i + 1;
            }
        }
        return lines;
    }
}
