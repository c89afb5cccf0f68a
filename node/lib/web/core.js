'use strict';
// The middleware's decisions, the same for every framework: the adapters
// (express.js, fastify.js) only read the request and write the answer.
//
// A request first meets its route's keyed policies, then, when they admit,
// the route's point. Every policy's key function (and cost function, for a
// key that is not null) runs first; then one call to sds-http's
// RoutePolicies (NativeRoutePolicies, node/src/http.rs) decides them in
// order (after a refusal the later ones only peek) and gives the header
// fields: no order of our own and nothing formatted here.
const { native, waitOf } = require('../native.js');
const { KeyedLimit } = require('../keyed.js');
const { Client } = require('../client.js');
const { checkOptions, checkFunction } = require('../arguments.js');
const { invalidArgument, describe } = require('../errors.js');

const POLICY_OPTIONS = ['name', 'limit', 'key', 'cost'];
const ROUTE_OPTIONS = ['client', 'point', 'policies', 'fallback', 'headers'];
const NO_FIELDS = Object.freeze([]);
const NO_KEYS = Object.freeze([]);

// What check() found.
const ADMITTED = 0;
const LIMITED = 1; // 429: a keyed policy refused
const DOWNGRADED = 2; // 503 or the fallback: the point downgraded
const FULL = 3; // a plain 503: an in-flight key table had no cell for a new key
// The verdicts of NativeRoutePolicies' decide, in io after the costs; then
// the held policies' bits (low 32, high 32).
const NATIVE_LIMITED = 1;
const NATIVE_TABLE_FULL = 2;
// What exit() counts as the request's failure: a 5xx answer.
const SERVER_ERROR = Object.freeze({ reason: 'the response status was 5xx' });

const POLICY = Symbol('sds.web.policy');

/**
 * A keyed limit of a route: `limit` (a KeyedLimit) decides for the key
 * `key(req)` returns (a string or bytes; `null` or `undefined`: the policy
 * does not apply to that request) at `cost` units (a number or
 * `(req) => number`). `name` names it in the RateLimit headers.
 */
function policy(options) {
  const o = checkOptions(options, POLICY_OPTIONS, 'policy option');
  if (typeof o.name !== 'string') throw invalidArgument(`policy name must be a string, got ${describe(o.name)}`);
  if (!(o.limit instanceof KeyedLimit)) {
    throw invalidArgument(`policy limit must be a KeyedLimit, got ${describe(o.limit)}`);
  }
  checkFunction(o.key, 'policy key');
  const cost = o.cost ?? 1;
  if (typeof cost !== 'function' && !(Number.isInteger(cost) && cost >= 1 && cost <= 0xffffffff)) {
    throw invalidArgument(`policy cost must be an integer from 1 to 4294967295 or a function, got ${describe(cost)}`);
  }
  return Object.freeze({ [POLICY]: true, name: o.name, limit: o.limit, key: o.key, cost });
}

function checkPolicies(policies) {
  if (policies === undefined) return [];
  if (!Array.isArray(policies)) throw invalidArgument(`policies must be an array, got ${describe(policies)}`);
  for (const p of policies) {
    if (p === null || typeof p !== 'object' || p[POLICY] !== true) {
      throw invalidArgument(`each of policies must be made by policy(), got ${describe(p)}`);
    }
  }
  return policies.slice();
}

/** The units in-flight policies hold for a request, until its response is over. */
class Held {
  constructor(route, keys, costs, low, high) {
    this.route = route;
    this.keys = keys;
    this.costs = costs;
    this.low = low;
    this.high = high;
  }

  release() {
    this.route.release(this.keys, this.costs, this.low, this.high);
  }
}

/**
 * One request's verdict: `kind` (ADMITTED, LIMITED, DOWNGRADED, FULL), the header
 * `fields` to set (flat: name, value, ...), the downgrade `reason`, what its
 * response's end gives back (`entry`, `held`), and the ms an admitted
 * request waits before its handler runs (`waitMs`: its paced point's).
 */
class Verdict {
  constructor(kind, fields, entry, held, reason) {
    this.kind = kind;
    this.fields = fields;
    this.entry = entry;
    this.held = held;
    this.reason = reason;
    this.waitMs = entry === null ? 0 : waitOf(entry._packed);
  }

  /** Whether the response's end has anything to settle. */
  get open() {
    return this.entry !== null || this.held !== null;
  }

  /**
   * Settles the request when its response is over, however it ended: the
   * point's entry exits (a 5xx counts as its failure), in-flight units go
   * back. The adapters call it from the response's 'close', which Node
   * emits after the last byte and on an abort alike.
   */
  finish(statusCode) {
    const { entry, held } = this;
    this.entry = null;
    this.held = null;
    if (held !== null) held.release();
    if (entry !== null) {
      if (statusCode >= 500) entry.error(SERVER_ERROR);
      entry.exit();
    }
  }
}

/** What one guarded route does with each request. */
class Guard {
  /** `options`: `client`, `point`, `policies`, `fallback`, `headers` (see README). */
  constructor(options, who) {
    const o = checkOptions(options, ROUTE_OPTIONS, `${who} option`);
    this.policies = checkPolicies(o.policies);
    this.fallback = o.fallback === undefined ? null : checkFunction(o.fallback, 'fallback');
    this._point = null;
    this._pointOf = null;
    this.client = null;
    if (o.point !== undefined) {
      if (!(o.client instanceof Client)) {
        throw invalidArgument(`client must be a Client when a point is given, got ${describe(o.client)}`);
      }
      this.client = o.client;
      if (typeof o.point === 'string') this._point = o.client.point(o.point);
      else this._pointOf = checkFunction(o.point, 'point');
    } else if (o.client !== undefined && !(o.client instanceof Client)) {
      throw invalidArgument(`client must be a Client, got ${describe(o.client)}`);
    }
    // Checks every name and the style now, when the route is set up.
    const style = o.headers ?? 'draft-10';
    if (typeof style !== 'string') throw invalidArgument(`headers must be a string, got ${describe(style)}`);
    this._route = new native.NativeRoutePolicies(
      style,
      this.policies.map((p) => p.name),
      this.policies.map((p) => p.limit._table),
    );
    const n = this.policies.length;
    const hot = this._route.hotPath();
    this._decide = hot.decide;
    // The costs in, the verdict and the held policies out (http.rs).
    this._io = hot.io;
    // Reused by every request (decide reads them at once).
    this._keys = n === 0 ? NO_KEYS : new Array(n).fill(null);
  }

  /** Whether this route limits anything. */
  get active() {
    return this.policies.length > 0 || this._point !== null || this._pointOf !== null;
  }

  /** Decides `req`: a Verdict. Throws what a key or cost function, a limit or a point throws. */
  check(req) {
    const policies = this.policies;
    const n = policies.length;
    let fields = NO_FIELDS;
    let held = null;
    if (n !== 0) {
      const keys = this._keys;
      const io = this._io;
      for (let i = 0; i < n; i++) {
        const p = policies[i];
        const key = p.key(req);
        keys[i] = key;
        if (key === undefined || key === null) continue;
        const cost = typeof p.cost === 'number' ? p.cost : p.cost(req);
        if (typeof cost !== 'number') throw invalidArgument(`cost must be a number, got ${describe(cost)}`);
        io[i] = cost;
      }
      fields = n === 1 ? this._decide(keys[0]) : this._decide(...keys);
      const verdict = io[n];
      if (verdict === NATIVE_LIMITED) return new Verdict(LIMITED, fields, null, null, null);
      // The service is full, not the client over a limit nor the point
      // downgraded: a plain 503, no fallback, no headers.
      if (verdict === NATIVE_TABLE_FULL) return new Verdict(FULL, NO_FIELDS, null, null, null);
      const low = io[n + 1];
      const high = io[n + 2];
      // The keys and costs as decided, for the release (the arrays are reused).
      if (low !== 0 || high !== 0) held = new Held(this._route, keys.slice(), io.slice(0, n), low, high);
    }
    let entry = null;
    try {
      const point = this._point ?? this._pointFor(req);
      if (point !== null) entry = point.enter();
    } catch (error) {
      // A point function that throws, a point table full of names.
      if (held !== null) held.release();
      throw error;
    }
    if (entry === null) return new Verdict(ADMITTED, fields, null, held, null);
    if (entry.downgraded) {
      entry.exit();
      if (held !== null) held.release();
      return new Verdict(DOWNGRADED, fields, null, null, entry.reason);
    }
    return new Verdict(ADMITTED, fields, entry, held, null);
  }

  _pointFor(req) {
    if (this._pointOf === null) return null;
    const name = this._pointOf(req);
    return name === undefined || name === null ? null : this.client.point(name);
  }
}

/** The route options of `base` overridden by `route`'s (a Fastify route's config). */
function merge(base, route) {
  const merged = {};
  for (const key of ROUTE_OPTIONS) {
    const value = route[key] !== undefined ? route[key] : base[key];
    if (value !== undefined) merged[key] = value;
  }
  return merged;
}

module.exports = { policy, Guard, merge, ROUTE_OPTIONS, ADMITTED, LIMITED, DOWNGRADED, FULL };
