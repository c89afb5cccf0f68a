import io.sdsnative.Client;
import io.sdsnative.Entry;
import io.sdsnative.Stats;
import io.sdsnative.Strategy;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * Several JVMs sharing one limit through a shared table: this process starts
 * 4 worker JVMs, each with a Client on the same table file, each trying a
 * "checkout" call 100 times against visitThreshold 100 per 10 s for the whole
 * host. Each worker prints what it admitted; the parent prints the host
 * total, read through its own client on the file. Run with `make demo-java`
 * (which compiles it), or:
 *   javac -cp jvm/sds-native/target/sds-native-0.1.0.jar -d /tmp/demo examples/java/Shared.java
 *   java -cp jvm/sds-native/target/sds-native-0.1.0.jar:/tmp/demo Shared
 */
public class Shared {
    private static final int WORKERS = 4;
    private static final int TRIES = 100;
    private static final int LIMIT = 100;
    private static final int CAPACITY = 64;

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("worker")) {
            worker(args[1]);
        } else {
            parent();
        }
    }

    private static void parent() throws Exception {
        // A bare name is a file under /dev/shm. A service names its table once
        // ("my-service.sds"); this demo makes one per run and removes it.
        String name = "sds-demo-" + ProcessHandle.current().pid() + ".sds";
        // Every process opens the same file with the same capacity; the first
        // creates it (mode 0600), the others attach.
        try (Client client = Client.openShared(name, CAPACITY)) {
            client.setStrategy("checkout", Strategy.builder().visitThreshold(LIMIT).build());
            System.out.println(WORKERS + " worker JVMs x " + TRIES + " tries, visitThreshold " + LIMIT + " on "
                    + client.sharedPath() + ":");
            List<Process> workers = new ArrayList<>();
            for (int i = 0; i < WORKERS; i++) {
                workers.add(new ProcessBuilder(new File(System.getProperty("java.home"), "bin/java").getPath(),
                        "-cp", System.getProperty("java.class.path"), "Shared", "worker", name)
                        .redirectError(ProcessBuilder.Redirect.INHERIT).start());
            }
            // Start together: each worker says "ready" once it has attached.
            List<BufferedReader> outputs = new ArrayList<>();
            for (Process w : workers) {
                BufferedReader out = new BufferedReader(new InputStreamReader(w.getInputStream(), StandardCharsets.UTF_8));
                outputs.add(out);
                out.readLine();
            }
            for (Process w : workers) {
                PrintStream in = new PrintStream(w.getOutputStream(), true, "UTF-8");
                in.println("go");
            }
            for (int i = 0; i < WORKERS; i++) {
                System.out.println("  " + outputs.get(i).readLine());
                workers.get(i).waitFor();
            }
            Stats stats = client.stats("checkout");
            System.out.println("host total: " + stats.visit() + " requests, " + (stats.visit() - stats.downgrade())
                    + " admitted, " + stats.downgrade() + " downgraded");
            Files.deleteIfExists(Paths.get(client.sharedPath()));
        }
    }

    private static void worker(String name) throws Exception {
        try (Client client = Client.openShared(name, CAPACITY)) {
            System.out.println("ready");
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            int admitted = 0;
            for (int i = 0; i < TRIES; i++) {
                try (Entry entry = client.enter("checkout")) {
                    if (!entry.isDowngraded()) {
                        admitted++;
                    }
                }
                if (i % 5 == 4) {
                    Thread.sleep(1); // let the other workers interleave with this one
                }
            }
            System.out.println("worker pid " + ProcessHandle.current().pid() + ": admitted " + admitted + " of " + TRIES);
        }
    }
}
