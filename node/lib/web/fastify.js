'use strict';
// The Fastify plugin: core.js decides, this writes the answer. Registered
// with `app.register(fastify, options)`, it guards every route registered
// after it in that scope (and its children, as fastify-plugin's skip-override
// makes it): the plugin's options are every route's defaults, a route's
// `config.sds` overrides them (`config: { sds: false }`: not guarded).
const { Guard, merge, ROUTE_OPTIONS } = require('./core.js');
const { guardedHandler, callFallback } = require('./respond.js');
const { checkOptions } = require('../arguments.js');
const { invalidArgument, describe } = require('../errors.js');

// Fastify hands a plugin its register options too.
const PLUGIN_OPTIONS = [...ROUTE_OPTIONS, 'prefix', 'logLevel', 'logSerializers'];

// How the onRequest hook of a guarded route writes (respond.js).
const FASTIFY = {
  raw: (reply) => reply.raw,
  header: (reply, name, value) => reply.header(name, value),
  // Answering from the hook without calling done() ends the chain there.
  plain(reply, status, text) {
    reply.code(status).type('text/plain; charset=utf-8').send(text);
  },
  // The fallback is a handler: its return value (or resolved value) is the
  // payload unless it sent one itself; a throw or a rejection is the error.
  fallback: (run, reply) =>
    callFallback(
      run,
      (value) => {
        if (!reply.sent) reply.send(value);
      },
      (error) => reply.send(error),
    ),
};

function routeConfig(route) {
  const sds = route.config?.sds;
  if (sds === undefined || sds === false) return sds;
  if (sds === null || typeof sds !== 'object') {
    throw invalidArgument(`route ${route.url} config.sds must be an object or false, got ${describe(sds)}`);
  }
  return checkOptions(sds, ROUTE_OPTIONS, `route ${route.url} config.sds`);
}

/** `app.register(fastify, { client, point, policies, fallback, headers })`. */
function fastify(instance, options, done) {
  let base;
  try {
    base = checkOptions(options, PLUGIN_OPTIONS, 'fastify option');
    new Guard(merge(base, {}), 'fastify'); // checks the defaults now, routes or not
  } catch (error) {
    return done(error);
  }
  instance.addHook('onRoute', (route) => {
    const config = routeConfig(route);
    if (config === false) return;
    const guard = new Guard(config === undefined ? merge(base, {}) : merge(base, config), `route ${route.url}`);
    if (!guard.active) return;
    const hook = guardedHandler(guard, FASTIFY);
    const own = route.onRequest;
    route.onRequest = own === undefined || own === null ? [hook] : [hook].concat(own);
  });
  done();
}

// What fastify-plugin would set: no encapsulation (the hook reaches the
// routes of the scope that registered it), a name, the Fastify it needs.
fastify[Symbol.for('skip-override')] = true;
fastify[Symbol.for('fastify.display-name')] = 'sds-native';
fastify[Symbol.for('plugin-meta')] = { name: 'sds-native', fastify: '5.x' };

module.exports = { fastify };
