'use strict';
// `AdminAgent`: a client's table managed by the SDS console (the addon's
// NativeAgent, which runs sds-agent on a thread of its own), with its log
// lines as events.
const { EventEmitter } = require('node:events');
const { native } = require('./native.js');
const { backgroundService } = require('./service.js');

const AGENT_WARNING = 'SDS_AGENT_WARNING';
const LISTENER_ERROR = 'SDS_LISTENER_ERROR';

// Distinct warning texts remembered per agent (a console that stays down
// repeats the same line every pull); past this many the memory starts over.
const WARNED_LIMIT = 256;

const Service = backgroundService(EventEmitter, '_agent',
  'this client already has an SDS console agent: close() it first');

/**
 * The SDS console agent of one client: pulls the app's strategies into the
 * client's table and uploads its per-cycle statistics, on a native thread.
 * Emits `'log'` `({ level, message })` for each of the agent's lines
 * (`'info'`: a version applied, the reporter role taken; `'warn'`: a
 * failure). With no `'log'` listener, each distinct `'warn'` text becomes a
 * process warning (code `SDS_AGENT_WARNING`) once, and `'info'` lines are
 * dropped. `close()` leaves the strategies in force in the table.
 */
class AdminAgent extends Service {
  constructor(client, options) {
    super();
    this.client = client;
    this._warned = new Set();
    this._native = new native.NativeAgent(client._table, options, (level, message) => this._log(level, message));
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
        process.emitWarning(message, { code: AGENT_WARNING });
      }
    } catch (error) {
      let text = 'a value that cannot be shown';
      try {
        text = String(error);
      } catch {
        // Keep the placeholder.
      }
      process.emitWarning(`a 'log' listener of the SDS agent threw: ${text}`, { code: LISTENER_ERROR });
    }
  }
}

module.exports = { AdminAgent };
