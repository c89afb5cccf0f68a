'use strict';
// The life cycle a client's two background services share, the console
// agent (AdminAgent) and the cluster sync (ClusterSync): at most one of
// each per client, held in the client's slot until close(); close()
// idempotent; status() still readable after it. Stopping the thread when
// nobody calls close() (the process or a worker thread ends) is the native
// handle's (node/src/service.rs), and so is everything about the options:
// the object goes to the addon whole, and the service's crate judges it.
const { invalidArgument } = require('./errors.js');

/**
 * `Base` (EventEmitter for the agent, Object for the cluster sync) with the
 * life cycle of a service kept in `client[slot]`; `busy` is the message
 * refusing a second one. A subclass's constructor sets `client` and
 * `_native`.
 */
function backgroundService(Base, slot, busy) {
  return class BackgroundService extends Base {
    /** A running service of `client` started with `options`. */
    static connect(client, options) {
      if (client[slot] !== null) throw invalidArgument(busy);
      const service = new this(client, options);
      client[slot] = service;
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

module.exports = { backgroundService };
