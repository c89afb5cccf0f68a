'use strict';
// The middleware's decisions, the same for every framework: the adapters
// (express.js, fastify.js) only read the request and write the answer.
//
// A request first meets its route's keyed policies (every one decides, so
// the headers speak for each and Retry-After waits for all that refused),
// then, when none refused, the route's point. The header fields come from
// sds-http through NativeHeaders (node/src/http.rs): nothing is formatted
// here.
const { native, waitOf } = require('../native.js');
const { KeyedLimit } = require('../keyed.js');
const { Client } = require('../client.js');
const { checkOptions, checkFunction } = require('../arguments.js');
const { invalidArgument, describe } = require('../errors.js');

const POLICY_OPTIONS = ['name', 'limit', 'key', 'cost'];
const ROUTE_OPTIONS = ['client', 'point', 'policies', 'fallback', 'headers'];
// The numbers of one decision for NativeHeaders#fields (http.rs DECISION_LEN).
const DECISION_LEN = 7;
const NO_FIELDS = Object.freeze([]);

// What check() found.
const ADMITTED = 0;
const LIMITED = 1; // 429: a keyed policy refused
const DOWNGRADED = 2; // 503 or the fallback: the point downgraded
// What exit() counts as the request's failure: a 5xx answer.
const SERVER_ERROR = Object.freeze({ reason: 'the response status was 5xx' });

const POLICY = Symbol('sds.web.policy');
// The core's ErrorCode::TableFull.
const TABLE_FULL = 'SDS_TABLE_FULL';

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

/** Gives back the units in-flight policies took for a request: [limit, key, cost, ...]. */
function release(held) {
  for (let i = 0; i < held.length; i += 3) held[i].release(held[i + 1], held[i + 2]);
}

/**
 * One request's verdict: `kind` (ADMITTED, LIMITED, DOWNGRADED), the header
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
    if (held !== null) release(held);
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
    this._headers = new native.NativeHeaders(
      style,
      this.policies.map((p) => p.name),
    );
    this._io = new Float64Array(DECISION_LEN * Math.max(1, this.policies.length));
  }

  /** Whether this route limits anything. */
  get active() {
    return this.policies.length > 0 || this._point !== null || this._pointOf !== null;
  }

  /** Decides `req`: a Verdict. Throws what a key function or a limit throws. */
  check(req) {
    const policies = this.policies;
    const io = this._io;
    let count = 0;
    let refused = false;
    let held = null;
    let i = 0;
    try {
      for (; i < policies.length; i++) {
        const p = policies[i];
        const key = p.key(req);
        if (key === undefined || key === null) continue;
        const cost = typeof p.cost === 'number' ? p.cost : p.cost(req);
        const d = p.limit.decide(key, cost);
        const at = count * DECISION_LEN;
        io[at] = i;
        io[at + 1] = d.admitted ? 1 : 0;
        io[at + 2] = d.limit;
        io[at + 3] = d.remaining;
        io[at + 4] = d.resetMs;
        io[at + 5] = d.retryAfterMs;
        io[at + 6] = d.windowMs;
        count++;
        if (!d.admitted) refused = true;
        // An inFlight rule's units are held until the response is over.
        else if (p.limit.kind === 'inFlight') (held ??= []).push(p.limit, key, cost);
      }
    } catch (error) {
      if (held !== null) release(held);
      // An inFlight table whose cells all hold units cannot take a new key
      // (the core never evicts a holder): the service is full, as nginx's
      // limit_conn answers, not the client over its limit.
      if (error !== null && typeof error === 'object' && error.code === TABLE_FULL) {
        return new Verdict(DOWNGRADED, NO_FIELDS, null, null, 'KEY_TABLE_FULL');
      }
      throw error;
    }
    const fields = count === 0 ? NO_FIELDS : this._headers.fields(io, count);
    if (refused) {
      if (held !== null) release(held);
      return new Verdict(LIMITED, fields, null, null, null);
    }
    let entry = null;
    try {
      const point = this._point ?? this._pointFor(req);
      if (point !== null) entry = point.enter();
    } catch (error) {
      // A point function that throws, a point table full of names.
      if (held !== null) release(held);
      throw error;
    }
    if (entry === null) return new Verdict(ADMITTED, fields, null, held, null);
    if (entry.downgraded) {
      entry.exit();
      if (held !== null) release(held);
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

module.exports = { policy, Guard, merge, ROUTE_OPTIONS, ADMITTED, LIMITED, DOWNGRADED };
