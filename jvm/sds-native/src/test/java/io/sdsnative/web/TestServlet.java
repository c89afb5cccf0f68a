package io.sdsnative.web;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * The application behind the filter, by path: {@code /ok} answers 200,
 * {@code /boom} throws, {@code /fail} answers 500, {@code /block} answers 200
 * once {@link #release} is counted down (and counts {@link #entered} down on
 * entry), {@code /async} does the same from another thread after
 * {@code startAsync}; {@code /stall} starts async with a 100 ms timeout and
 * never completes.
 */
final class TestServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    final transient CountDownLatch entered = new CountDownLatch(1);
    final transient CountDownLatch release = new CountDownLatch(1);

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        switch (request.getRequestURI()) {
            case "/boom":
                throw new IllegalStateException("the application failed");
            case "/fail":
                response.setStatus(500);
                response.getWriter().write("failed\n");
                return;
            case "/block":
                entered.countDown();
                await();
                response.getWriter().write("ok\n");
                return;
            case "/async":
                AsyncContext async = request.startAsync();
                async.setTimeout(10_000);
                new Thread(() -> {
                    entered.countDown();
                    await();
                    try {
                        async.getResponse().getWriter().write("ok\n");
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                    async.complete();
                }).start();
                return;
            case "/stall":
                request.startAsync().setTimeout(100);
                return;
            default:
                response.getWriter().write("ok\n");
        }
    }

    private void await() {
        try {
            if (!release.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
