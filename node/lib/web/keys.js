'use strict';
// Key functions of a policy: what names the client a request counts for.
// The client address is sds-http's rule (node/src/http.rs): JavaScript
// reads the socket's address and the X-Forwarded-For header and hands both
// over; it parses no address of its own.
const { native } = require('../native.js');
const { checkOptions } = require('../arguments.js');
const { invalidArgument, describe } = require('../errors.js');

const ADDRESS_OPTIONS = ['ipv4Prefix', 'ipv6Prefix', 'trustedProxies'];
// How many peers' keys a clientAddress() without trusted proxies keeps.
const PEERS = 4096;

function prefix(value, fallback, max, what) {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw invalidArgument(`${what} must be an integer from 0 to ${max}, got ${describe(value)}`);
  }
  return value;
}

function proxies(value) {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((p) => typeof p === 'string')) {
    throw invalidArgument(`trustedProxies must be an array of strings, got ${describe(value)}`);
  }
  return value;
}

/**
 * The key of a request's client: its address masked to `ipv4Prefix` (32)
 * or `ipv6Prefix` (64) bits, or, when the peer is one of `trustedProxies`
 * (addresses or CIDR networks), the client those proxies name in
 * X-Forwarded-For (walked from the right). Keys are canonical text:
 * `203.0.113.7`, `2001:db8:1:2::/64`.
 */
function clientAddress(options) {
  const o = checkOptions(options, ADDRESS_OPTIONS, 'clientAddress option');
  const trusted = proxies(o.trustedProxies);
  const rule = new native.NativeClientAddress(
    prefix(o.ipv4Prefix, 32, 32, 'ipv4Prefix'),
    prefix(o.ipv6Prefix, 64, 128, 'ipv6Prefix'),
    trusted,
  );
  if (trusted.length > 0) {
    return function clientAddressKey(req) {
      return rule.key(peerOf(req), req.headers['x-forwarded-for']);
    };
  }
  // Trusting no proxy, the key is the peer's alone: Rust's answer for an
  // address is kept (up to PEERS addresses, then forgotten all at once), so
  // a returning client costs a Map lookup.
  const byPeer = new Map();
  return function clientAddressKey(req) {
    const peer = peerOf(req);
    let key = byPeer.get(peer);
    if (key === undefined) {
      key = rule.key(peer);
      if (byPeer.size >= PEERS) byPeer.clear();
      byPeer.set(peer, key);
    }
    return key;
  };
}

/** The socket's remote address; a request whose socket is gone has none. */
function peerOf(req) {
  const peer = req.socket?.remoteAddress;
  if (peer === undefined) throw invalidArgument('the request has no peer address (its connection is closed)');
  return peer;
}

/**
 * The value of the request header `name` as the key (several values joined
 * by ", ", as Node joins them); a request without it is not limited by the
 * policy.
 */
function header(name) {
  if (typeof name !== 'string' || name === '') {
    throw invalidArgument(`header name must be a non-empty string, got ${describe(name)}`);
  }
  const lower = name.toLowerCase();
  return function headerKey(req) {
    const value = req.headers[lower];
    return Array.isArray(value) ? value.join(', ') : value;
  };
}

module.exports = { clientAddress, header };
