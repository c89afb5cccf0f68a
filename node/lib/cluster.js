'use strict';
// `ClusterSync`: cluster points of a client's table, their counts shared
// with the other instances of the service through Redis by the addon's
// NativeCluster (sds-cluster's syncer thread). Decisions stay local:
// `enter`/`exit` on a cluster point read local + remote counts and never
// touch the network.
const { native } = require('./native.js');
const { checkOptions } = require('./arguments.js');
const { invalidArgument, describe } = require('./errors.js');

const CLUSTER_OPTIONS = [
  'url', 'urls', 'points', 'redisCluster', 'syncMs', 'timeoutMs', 'maxBackoffMs', 'keyPrefix',
  'tlsCaFile', 'tlsCertFile', 'tlsKeyFile',
];

/** `url` (one server) or `urls` (seed nodes) as the list the addon takes. */
function urlList(o) {
  if (o.url !== undefined && o.urls !== undefined) {
    throw invalidArgument('give url or urls, not both');
  }
  if (o.url === undefined) return o.urls === undefined ? [] : o.urls;
  if (typeof o.url !== 'string') throw invalidArgument(`url must be a string, got ${describe(o.url)}`);
  return [o.url];
}

/**
 * The syncer of one client's cluster points. It runs until `close()`, also
 * when nothing references it, and never keeps the event loop open.
 */
class ClusterSync {
  constructor(client, options) {
    const o = checkOptions(options, CLUSTER_OPTIONS, 'connectCluster option');
    this.client = client;
    // The addon checks the types, the cluster crate the values.
    this._native = new native.NativeCluster(
      client._table,
      urlList(o),
      o.points,
      o.redisCluster,
      o.syncMs,
      o.timeoutMs,
      o.maxBackoffMs,
      o.keyPrefix,
      o.tlsCaFile,
      o.tlsCertFile,
      o.tlsKeyFile,
    );
  }

  /** The syncer's state: connection, last sync, lag, round trip, counts, last error. */
  status() {
    return this._native.status();
  }

  /** One sync now, on this thread: blocks for one round trip (at most `timeoutMs`). */
  syncNow() {
    this._native.syncNow();
  }

  /**
   * Exact mode: decides one request of the cluster point `point` in Redis
   * (one Lua script: the cluster's window and token bucket, this request
   * counted). Resolves to `{ admitted, reason, exact }`; no `exit` follows.
   * The round trip runs on libuv's thread pool, not the event loop.
   */
  async enterExact(point, nowMs) {
    return this._native.enterExact(point, nowMs);
  }

  /** Whether `close()` has not been called. */
  get running() {
    return this._native.running;
  }

  /**
   * Stops the syncer and joins its thread (at once, or within one round
   * trip's timeout; after the exact calls in flight). The points stay
   * cluster points; the other instances' counts leave the window within
   * 10 s. Idempotent.
   */
  close() {
    this._native.close();
    if (this.client._cluster === this) this.client._cluster = null;
  }
}

module.exports = { ClusterSync };
