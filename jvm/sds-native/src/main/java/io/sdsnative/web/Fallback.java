package io.sdsnative.web;

import java.io.IOException;

import io.sdsnative.Reason;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * What a request gets when its SDS point is downgraded (instead of the
 * default 503): a cached page, a degraded answer. The {@code RateLimit}
 * headers are set on {@code response} already.
 */
@FunctionalInterface
public interface Fallback {
    /** Answers {@code request}, whose point was downgraded for {@code reason}. */
    void respond(HttpServletRequest request, HttpServletResponse response, Reason reason)
            throws IOException, ServletException;
}
