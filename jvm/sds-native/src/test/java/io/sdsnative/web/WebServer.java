package io.sdsnative.web;

import java.net.URI;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A real Jetty on a free loopback port: one servlet behind the filter (if
 * any) at every path, and a Jetty HTTP client to call it. Closing stops both.
 */
final class WebServer implements AutoCloseable {
    private final Server server;
    private final HttpClient client;
    private final String host;
    private final int port;

    private WebServer(Server server, HttpClient client, String host, int port) {
        this.server = server;
        this.client = client;
        this.host = host;
        this.port = port;
    }

    /** On 127.0.0.1. */
    static WebServer start(Filter filter, HttpServlet servlet) throws Exception {
        return start("127.0.0.1", filter, servlet);
    }

    /** On {@code host} ({@code "127.0.0.1"} or {@code "::1"}); {@code filter} null: none. */
    static WebServer start(String host, Filter filter, HttpServlet servlet) throws Exception {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost(host);
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        if (filter != null) {
            context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
        }
        context.addServlet(new ServletHolder(servlet), "/*");
        server.setHandler(context);
        server.start();
        HttpClient client = new HttpClient();
        client.start();
        return new WebServer(server, client, host, connector.getLocalPort());
    }

    URI uri(String path) {
        String h = host.contains(":") ? "[" + host + "]" : host;
        return URI.create("http://" + h + ":" + port + path);
    }

    int port() {
        return port;
    }

    /** GET {@code path} with these request headers (name, value, name, value ...). */
    ContentResponse get(String path, String... headers) throws Exception {
        Request request = client.newRequest(uri(path)).timeout(10, TimeUnit.SECONDS);
        for (int i = 0; i < headers.length; i += 2) {
            final String name = headers[i];
            final String value = headers[i + 1];
            request.headers(h -> h.add(name, value));
        }
        return request.send();
    }

    /** A request to send later (asynchronously). */
    Request request(String path, Map<String, String> headers) {
        Request request = client.newRequest(uri(path)).timeout(10, TimeUnit.SECONDS);
        for (Map.Entry<String, String> e : headers.entrySet()) {
            request.headers(h -> h.add(e.getKey(), e.getValue()));
        }
        return request;
    }

    @Override
    public void close() throws Exception {
        try {
            client.stop();
        } finally {
            server.stop();
        }
    }
}
