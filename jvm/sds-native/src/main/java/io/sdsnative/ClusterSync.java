package io.sdsnative;

/**
 * A client's cluster points synced with Redis: made by
 * {@link Client#connectCluster(ClusterConfig)}. A native thread
 * ({@code sds-cluster}, never attached to the JVM, so it never keeps the JVM
 * alive) pushes this table's counts of the cluster points and reads the
 * other instances' back, once per {@code syncMs}; {@link Client#enter} reads
 * local + remote counts and never waits on it, on Redis or on a lock.
 * Its life cycle is a {@link BackgroundService}'s: {@link #close()} returns at
 * once while the syncer sleeps, within one {@code timeoutMs} while a round
 * trip is in flight (and after the exact decisions running). The points stay
 * cluster points after it is closed; their remote counts leave the window
 * within 10 s.
 */
public final class ClusterSync extends BackgroundService<ClusterStatus> {
    ClusterSync(Client client, long nativeCluster) {
        super(client, nativeCluster, ClusterStatus::new);
    }

    /**
     * Runs one sync now on the calling thread (after the syncer's sync in
     * progress, if any), connecting at once if there is no connection: what
     * this table counted is in Redis, and the others' counts are here, when it
     * returns. Returns normally too when another process of the host holds
     * the syncer role.
     *
     * @throws SdsException {@code UNAVAILABLE} with the cluster crate's
     *     message ({@code "redis: ..."}) when Redis fails or cannot be reached;
     *     {@code CLOSED}
     */
    public void syncNow() {
        run(handle -> Native.clusterSyncNow(handle, this));
    }

    /** Exact mode at the current time: see {@link #enterExact(String, long)}. */
    public ClusterDecision enterExact(String point) {
        return enterExact(point, System.currentTimeMillis());
    }

    /**
     * Exact mode: decides one request of the cluster point {@code point} at
     * {@code nowMs} in Redis, where one Lua script checks the point's
     * {@code visitThreshold} (the cluster's 10 s window) and token bucket (the
     * cluster's current second) and counts the request, atomically. Blocks for
     * one round trip (callers of one {@code ClusterSync} queue on its
     * connection); no exit follows, and concurrency, exceptions, timeouts and
     * delays are not applied. When Redis cannot be reached, the table decides
     * locally ({@link ClusterDecision#isExact()} false), counted and pushed
     * after recovery. See "Cluster-wide limits (Redis)" in the README.
     *
     * @throws SdsException {@code INVALID_ARGUMENT} when {@code point} is not
     *     one of this sync's points, for a negative time or a name that is not
     *     valid UTF-16; {@code NULL_ARGUMENT}; {@code CLOSED}
     */
    public ClusterDecision enterExact(String point, long nowMs) {
        Client.checkText(point, "point name");
        return ClusterDecision.of(call(handle -> Native.clusterEnterExact(handle, this, point, nowMs)));
    }
}
