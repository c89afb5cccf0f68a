'use strict';
// CommonJS entry of sds-native; index.mjs re-exports the same objects.
const { Client, Point } = require('./lib/client.js');
const { Entry } = require('./lib/entry.js');
const { SlidingWindow } = require('./lib/window.js');
const { DowngradedError } = require('./lib/errors.js');
const { AdminAgent, ClusterSync } = require('./lib/services.js');
const { KeyedLimit } = require('./lib/keyed.js');
// prom-client and OpenTelemetry adapters of `Client#metrics()`, see README "Metrics".
const metrics = require('./lib/metrics.js').api;
// The web middleware (Express, Fastify): one namespace, see README.
const web = require('./lib/web/index.js');
// Stores of express-rate-limit and @fastify/rate-limit, see README "Rate limiting a web app".
const { ExpressRateLimitStore } = require('./lib/stores/express.js');
const { FastifyRateLimitStore } = require('./lib/stores/fastify.js');

module.exports = {
  Client, Point, Entry, SlidingWindow, DowngradedError, AdminAgent, ClusterSync, KeyedLimit, web,
  ExpressRateLimitStore, FastifyRateLimitStore, metrics,
};
