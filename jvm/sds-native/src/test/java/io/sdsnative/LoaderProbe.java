package io.sdsnative;

/** Run in a child JVM by LoaderTest: loads the library and prints the outcome. */
public final class LoaderProbe {
    private LoaderProbe() {}

    public static void main(String[] args) {
        try {
            System.out.println("loaded " + Strategy.DEFAULT.get("downgradeRate"));
        } catch (UnsatisfiedLinkError e) {
            System.out.println("error " + e.getMessage());
        }
    }
}
