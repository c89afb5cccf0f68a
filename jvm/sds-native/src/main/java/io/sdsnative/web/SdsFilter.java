package io.sdsnative.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

import io.sdsnative.Client;
import io.sdsnative.Entry;
import io.sdsnative.ErrorCode;
import io.sdsnative.KeyedLimit;
import io.sdsnative.SdsException;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * A servlet filter guarding the requests it is mapped to with per-key limits
 * ({@link Policy}) and an SDS point (its strategy: concurrency, circuit
 * breaking, the console's strategies). Built with {@link #builder()},
 * registered programmatically in any Jakarta Servlet 5+ container
 * ({@code ServletContext.addFilter(name, filter)}, Jetty's
 * {@code ServletContextHandler.addFilter}, Spring's
 * {@code FilterRegistrationBean}); one filter per group of routes that share
 * a guard. Thread-safe.
 *
 * <p>For each request: every policy's key function runs first (a
 * {@code String} from a {@link KeyFunction}, or any bytes from a
 * {@link BytesKeyFunction} given to {@link Policy#ofBytes}; a null key
 * exempts the request from that policy), and its cost function for a
 * non-null key; then the policies decide in order, the crate
 * {@code sds-http}'s {@code RoutePolicies} (the order of the Python and Node
 * middleware too). Once one refuses, the others only show their state
 * ({@code peek}, nothing taken) and the request is answered
 * {@code 429 Too Many Requests} with {@code Retry-After} (when a wait can cure
 * it). A new key of an in-flight policy whose table has no free cell
 * ({@code TABLE_FULL}) is answered a plain {@code 503 Service Unavailable},
 * without headers and without the fallback: the service is full, not the
 * client over its limit. Then the point is entered: a downgrade answers the
 * fallback, or {@code 503 Service Unavailable}. Otherwise the application runs, its
 * response carrying the {@code RateLimit} headers; on a paced point
 * ({@code maxQueueingTimeMs}) the request's thread first sleeps the entry's
 * {@link Entry#waitMs()}, so the application sees requests evenly spaced at
 * the point's rate (a thread interrupted during that wait answers 503 without
 * running the application; its entry exits with no exception counted). When the response
 * completes (also when the application throws, and for an asynchronous
 * request when it completes, fails or times out) the in-flight policies get
 * their units back and the point's entry exits: as an error if the
 * application threw or answered 5xx.
 *
 * <p>The header fields are the crate {@code sds-http}'s: by default
 * {@code RateLimit} and {@code RateLimit-Policy} of
 * draft-ietf-httpapi-ratelimit-headers-10 ({@code "per-ip";r=42;t=17}), or
 * {@code RateLimit-Limit/Remaining/Reset} ({@code "draft-6"}) or
 * {@code X-RateLimit-*} ({@code "x-ratelimit"}), the same values as the
 * Python and Node middleware's.
 *
 * <p>A request passes the filter once, even when the filter is also mapped to
 * {@code ASYNC}, {@code FORWARD} or {@code ERROR} dispatches. The filter does
 * not own the client or the limits: close them after the container stops
 * (the filter holds a reference of each limit's table, which it keeps
 * deciding with until the filter is garbage).
 */
public final class SdsFilter implements Filter {
    private static final byte[] TOO_MANY = "Too Many Requests\n".getBytes(StandardCharsets.UTF_8);
    private static final byte[] UNAVAILABLE = "Service Unavailable\n".getBytes(StandardCharsets.UTF_8);

    private final Client client;
    private final Function<? super HttpServletRequest, String> point;
    private final Policy[] policies;
    private final Fallback fallback;
    private final Route route;
    /** The request attribute that marks a request this filter has seen. */
    private final String seen = SdsFilter.class.getName() + ".seen@" + Integer.toHexString(System.identityHashCode(this));

    private SdsFilter(Builder b) {
        this.client = b.client;
        this.point = b.point;
        this.policies = b.policies.toArray(new Policy[0]);
        this.fallback = b.fallback;
        String[] names = new String[policies.length];
        KeyedLimit[] limits = new KeyedLimit[policies.length];
        for (int i = 0; i < names.length; i++) {
            names[i] = policies[i].name();
            limits[i] = policies[i].limit();
        }
        this.route = new Route(b.style, names, limits);
    }

    /** A builder: no point, no policy, draft-10 headers. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        if (!(req instanceof HttpServletRequest) || !(res instanceof HttpServletResponse)
                || req.getAttribute(seen) != null) {
            chain.doFilter(req, res);
            return;
        }
        req.setAttribute(seen, Boolean.TRUE);
        HttpServletRequest request = (HttpServletRequest) req;
        HttpServletResponse response = (HttpServletResponse) res;
        Admission admission = admit(request, response);
        if (admission == null) {
            return; // answered: 429, 503 or the fallback
        }
        if (!admission.awaitTurn()) {
            // Interrupted during the paced wait (the container stopping): the application never ran.
            answer(response, HttpServletResponse.SC_SERVICE_UNAVAILABLE, UNAVAILABLE, null);
            return;
        }
        if (!admission.owes()) {
            chain.doFilter(req, res);
            return;
        }
        Throwable error = null;
        try {
            chain.doFilter(req, res);
        } catch (IOException | ServletException | RuntimeException | Error e) {
            error = e;
            throw e;
        } finally {
            if (error == null && request.isAsyncStarted()) {
                request.getAsyncContext().addListener(admission, request, response);
            } else {
                admission.finish(error, response.getStatus());
            }
        }
    }

    /**
     * Decides for {@code request}: the admission to run it with, or null when
     * the response was answered here (refused, downgraded).
     */
    private Admission admit(HttpServletRequest request, HttpServletResponse response)
            throws IOException, ServletException {
        Policy[] policies = this.policies;
        int n = policies.length;
        Object[] keys = null;
        long[] costs = null;
        Route.Decision decision = null;
        if (n > 0) {
            // Every key and cost function first: one that throws leaves nothing taken.
            keys = new Object[n];
            costs = new long[n];
            for (int i = 0; i < n; i++) {
                Policy policy = policies[i];
                // A String (its UTF-8 bytes are the key) or, from a BytesKeyFunction, a byte[].
                Object key = policy.keyOf(request);
                if (key instanceof byte[]) {
                    // The function may reuse its array (for the next policy, the next request): these bytes decide.
                    key = ((byte[]) key).clone();
                }
                if (key != null) {
                    costs[i] = policy.costOf(request);
                    keys[i] = key;
                }
            }
            decision = route.decide(keys, costs);
            if (decision.verdict == Route.TABLE_FULL) {
                // The service is full, not the client over a limit nor the point downgraded: no fallback, no headers.
                answer(response, HttpServletResponse.SC_SERVICE_UNAVAILABLE, UNAVAILABLE, null);
                return null;
            }
            if (decision.verdict == Route.LIMITED) {
                answer(response, 429, TOO_MANY, decision.fields);
                return null;
            }
        }
        long held = decision == null ? 0 : decision.held;
        Entry entry = null;
        // Whatever throws here (the point's function, a closed client) gives back the units held.
        try {
            String name = point == null ? null : point.apply(request);
            if (name != null) {
                entry = client.enter(name);
            }
        } catch (RuntimeException | Error e) {
            route.release(held, keys, costs);
            throw e;
        }
        if (decision != null) {
            setHeaders(response, decision.fields);
        }
        if (entry != null && entry.isDowngraded()) {
            entry.close();
            route.release(held, keys, costs);
            if (fallback != null) {
                fallback.respond(request, response, entry.reason());
            } else {
                answer(response, HttpServletResponse.SC_SERVICE_UNAVAILABLE, UNAVAILABLE, null);
            }
            return null;
        }
        return new Admission(entry, route, held, keys, costs, response);
    }

    private static void setHeaders(HttpServletResponse response, String[] fields) {
        if (fields != null) {
            for (int i = 0; i < fields.length; i += 2) {
                response.setHeader(fields[i], fields[i + 1]);
            }
        }
    }

    private static void answer(HttpServletResponse response, int status, byte[] body, String[] fields)
            throws IOException {
        response.setStatus(status);
        setHeaders(response, fields);
        response.setContentType("text/plain;charset=utf-8");
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    /**
     * How an {@link SdsFilter} is made. {@link #build()} checks everything
     * once: a filter that builds never refuses a request for its setup.
     */
    public static final class Builder {
        private Client client;
        private Function<? super HttpServletRequest, String> point;
        private final List<Policy> policies = new ArrayList<>();
        private Fallback fallback;
        private String style = "draft-10";

        private Builder() {}

        /** The client whose points {@link #point} names (private or shared: {@link Client#openShared}). */
        public Builder client(Client client) {
            this.client = client;
            return this;
        }

        /** Every request enters the point {@code name}. */
        public Builder point(String name) {
            if (name == null) {
                throw new SdsException(ErrorCode.NULL_ARGUMENT, "point name is null");
            }
            this.point = request -> name;
            return this;
        }

        /** Each request enters the point {@code name} gives it (by path, by method); null: no point. */
        public Builder point(Function<? super HttpServletRequest, String> name) {
            this.point = name;
            return this;
        }

        /** Adds a per-key limit, decided after those added before it. */
        public Builder policy(Policy policy) {
            if (policy == null) {
                throw new SdsException(ErrorCode.NULL_ARGUMENT, "policy is null");
            }
            policies.add(policy);
            return this;
        }

        /** What a downgraded request gets instead of a 503. */
        public Builder fallback(Fallback fallback) {
            this.fallback = fallback;
            return this;
        }

        /** The header style: {@code "draft-10"} (the default), {@code "draft-6"} or {@code "x-ratelimit"}. */
        public Builder headers(String style) {
            this.style = style;
            return this;
        }

        /**
         * The filter.
         *
         * @throws SdsException {@code INVALID_ARGUMENT} for an unknown header
         *     style, two policies of one name, a point without a client
         */
        public SdsFilter build() {
            if (point != null && client == null) {
                throw new SdsException(ErrorCode.INVALID_ARGUMENT, "a point needs a client: call client(...)");
            }
            Set<String> names = new HashSet<>();
            for (Policy p : policies) {
                if (!names.add(p.name())) {
                    throw new SdsException(ErrorCode.INVALID_ARGUMENT, "two policies are named " + p.name()
                            + ": names must differ within a filter");
                }
            }
            return new SdsFilter(this);
        }
    }
}
