'use strict';
// A client's two background services on the addon's NativeService
// (node/src/service.rs, which also judges their options, through their
// crates, and stops them when the process or worker ends): the SDS console
// agent (`AdminAgent`) and the cluster sync with Redis (`ClusterSync`), with
// one life cycle: at most one of each per client, in the client's slot
// until close(); close() idempotent; status() still readable after it.
const { EventEmitter } = require('node:events');
const { native } = require('./native.js');
const { invalidArgument, warnListenerError } = require('./errors.js');

// Distinct warning texts remembered per agent (a console that stays down
// repeats the same line every pull); past this many the memory starts over.
const WARNED_LIMIT = 256;

/**
 * `Base` with the life cycle of a service kept in `client[slot]`; `busy` is
 * the message refusing a second one. A subclass's constructor sets `client`
 * and `_native`.
 */
function backgroundService(Base, slot, busy) {
  return class BackgroundService extends Base {
    /** A running service of `client` started with `options`. */
    static connect(client, options) {
      if (client[slot] !== null) throw invalidArgument(busy);
      const service = new this(client, options);
      client[slot] = service;
      client._started[slot] = service;
      return service;
    }

    /** The state as a plain object (the last one after `close()`); see index.d.ts. */
    status() {
      return this._native.status();
    }

    /** Whether `close()` has not been called. */
    get running() {
      return this._native.running;
    }

    /** Stops the service and joins its thread; the client may connect another. Idempotent. */
    close() {
      this._native.close();
      if (this.client[slot] === this) this.client[slot] = null;
    }
  };
}

/**
 * The SDS console agent of one client: pulls the app's strategies into the
 * client's table and uploads its per-cycle statistics, on a native thread.
 * Emits `'log'` `({ level, message })` for each of the agent's lines
 * (`'info'`: a version applied, the reporter role taken; `'warn'`: a
 * failure). With no `'log'` listener, each distinct `'warn'` text becomes a
 * process warning (code `SDS_AGENT_WARNING`) once, and `'info'` lines are
 * dropped. `close()` leaves the strategies in force in the table.
 */
class AdminAgent extends backgroundService(EventEmitter, '_agent',
  'this client already has an SDS console agent: close() it first') {
  constructor(client, options) {
    super();
    this.client = client;
    this._warned = new Set();
    this._native = native.NativeService.agent(client._table, options, (level, message) => this._log(level, message));
  }

  /** The console's `returnValueStr` for `point` (the raw string), or `null`. */
  returnValue(point) {
    return this._native.returnValue(point);
  }

  /**
   * A line from the agent's thread, delivered on this thread's event loop.
   * Never throws: a throw here would be an uncaught exception.
   */
  _log(level, message) {
    try {
      if (this.listenerCount('log') > 0) {
        this.emit('log', { level, message });
      } else if (level === 'warn' && !this._warned.has(message)) {
        if (this._warned.size >= WARNED_LIMIT) this._warned.clear();
        this._warned.add(message);
        process.emitWarning(message, { code: 'SDS_AGENT_WARNING' });
      }
    } catch (error) {
      warnListenerError("a 'log' listener of the SDS agent", error);
    }
  }
}

/**
 * The syncer of one client's cluster points: their counts shared with the
 * other instances of the service through Redis. Decisions stay local:
 * `enter`/`exit` on a cluster point read local + remote counts and never
 * touch the network. It runs until `close()`, also when nothing references
 * it, and never keeps the event loop open. After `close()` the points stay
 * cluster points; the other instances' counts leave the window within 10 s.
 */
class ClusterSync extends backgroundService(Object, '_cluster',
  'this client already has a cluster sync: close() it first') {
  constructor(client, options) {
    super();
    this.client = client;
    this._native = native.NativeService.clusterSync(client._table, options);
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

module.exports = { AdminAgent, ClusterSync };
