import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.EnumSet;
import java.util.List;

import io.sdsnative.Client;
import io.sdsnative.KeyRule;
import io.sdsnative.KeyedLimit;
import io.sdsnative.Strategy;
import io.sdsnative.web.KeyFunctions;
import io.sdsnative.web.Policy;
import io.sdsnative.web.SdsFilter;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A servlet app behind io.sdsnative.web.SdsFilter: Jetty on a free loopback
 * port, an "orders" servlet guarded by a per-client-address limit (3 a
 * minute), a per-API-key limit (5 a minute, 50 for the key "partner") and
 * the SDS point "orders" (at most 8 at once). It sends 5 requests and prints
 * what each got: the status and the RateLimit headers. Run with `make demo`
 * (which builds the jar and the classpath with Jetty), or:
 *   mvn -q -f jvm/pom.xml -pl sds-native -DskipTests package dependency:build-classpath \
 *       -Dmdep.includeScope=test -Dmdep.outputFile=target/web-classpath.txt
 *   java -cp jvm/sds-native/target/sds-native-0.1.0.jar:$(cat jvm/sds-native/target/web-classpath.txt) \
 *       examples/java/WebApp.java
 */
public class WebApp {
    /** The application: an empty order. */
    public static class Orders extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws java.io.IOException {
            response.setContentType("text/plain");
            response.getWriter().write("order placed\n");
        }
    }

    public static void main(String[] args) throws Exception {
        try (Client client = new Client(64);
                KeyedLimit perIp = KeyedLimit.create(KeyRule.fixedWindow(3, 60_000), 10_000);
                KeyedLimit perKey = KeyedLimit.create(KeyRule.slidingWindow(5, 60_000).except("partner", 50), 10_000)) {
            client.setStrategy("orders", Strategy.builder().concurrentThreshold(8).build());
            SdsFilter filter = SdsFilter.builder()
                    .client(client)
                    .point("orders")
                    // Behind a proxy, trust it: KeyFunctions.clientAddress(64, List.of("10.0.0.0/8")).
                    .policy(Policy.of("per-ip", perIp, KeyFunctions.clientAddress()))
                    .policy(Policy.of("per-key", perKey, KeyFunctions.header("X-Api-Key")))
                    .fallback((request, response, reason) -> {
                        response.setStatus(503);
                        response.getWriter().write("busy (" + reason + "), try the cached page\n");
                    })
                    .build();

            Server server = new Server();
            ServerConnector connector = new ServerConnector(server);
            connector.setHost("127.0.0.1");
            connector.setPort(0);
            server.addConnector(connector);
            ServletContextHandler context = new ServletContextHandler();
            context.addFilter(new FilterHolder(filter), "/orders/*", EnumSet.of(DispatcherType.REQUEST));
            context.addServlet(new ServletHolder(new Orders()), "/orders/*");
            server.setHandler(context);
            server.start();
            try {
                URI orders = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/orders/new");
                HttpClient http = HttpClient.newHttpClient();
                String[] apiKeys = {"alice", "alice", "partner", null, "alice"};
                for (int i = 0; i < apiKeys.length; i++) {
                    HttpRequest.Builder request = HttpRequest.newBuilder(orders);
                    if (apiKeys[i] != null) {
                        request.header("X-Api-Key", apiKeys[i]);
                    }
                    HttpResponse<String> r = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
                    String key = apiKeys[i] == null ? "none" : apiKeys[i];
                    System.out.printf("request %d (X-Api-Key %s): %d %s%n", i + 1, key, r.statusCode(),
                            r.body().trim());
                    for (String name : List.of("RateLimit-Policy", "RateLimit", "Retry-After")) {
                        r.headers().firstValue(name).ifPresent(v -> System.out.println("  " + name + ": " + v));
                    }
                }
            } finally {
                server.stop();
            }
        }
    }
}
