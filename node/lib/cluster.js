'use strict';
// `ClusterSync`: cluster points of a client's table, their counts shared
// with the other instances of the service through Redis by the addon's
// NativeCluster (sds-cluster's syncer thread). Decisions stay local:
// `enter`/`exit` on a cluster point read local + remote counts and never
// touch the network.
const { native } = require('./native.js');
const { backgroundService } = require('./service.js');

const Service = backgroundService(Object, '_cluster', 'this client already has a cluster sync: close() it first');

/**
 * The syncer of one client's cluster points. It runs until `close()`, also
 * when nothing references it, and never keeps the event loop open. After
 * `close()` the points stay cluster points; the other instances' counts
 * leave the window within 10 s.
 */
class ClusterSync extends Service {
  constructor(client, options) {
    super();
    this.client = client;
    this._native = new native.NativeCluster(client._table, options);
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
}

module.exports = { ClusterSync };
