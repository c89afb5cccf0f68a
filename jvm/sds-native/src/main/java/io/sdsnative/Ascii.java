package io.sdsnative;

/**
 * The copy that puts a text key into a thread's scratch memory, shared by
 * {@link KeyedLimit#decide} and the servlet filter's routes and client-address
 * keys ({@code io.sdsnative.web}, hence public). Internal to sds-native.
 */
public final class Ascii {
    private Ascii() {}

    /**
     * Copies {@code text} into {@code into} from {@code at} if every character
     * is ASCII (so the bytes are its UTF-8) and it ends by {@code limit}: its
     * length; -1 otherwise (the caller then sends the text as it is), with
     * {@code into} written in part.
     */
    public static int copy(String text, byte[] into, int at, int limit) {
        int n = text.length();
        if (at + n > limit) {
            return -1;
        }
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            if (c >= 0x80) {
                return -1;
            }
            into[at + i] = (byte) c;
        }
        return n;
    }
}
