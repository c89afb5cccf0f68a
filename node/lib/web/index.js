'use strict';
// `web`, the middleware's one export of sds-native: `web.express(options)`,
// `web.fastify` (a plugin), `web.policy(...)`, and the key functions
// `web.clientAddress(...)`, `web.header(name)`. README: "Our middleware
// (Express, Fastify)".
const { policy } = require('./core.js');
const { express } = require('./express.js');
const { fastify } = require('./fastify.js');
const { clientAddress, header } = require('./keys.js');

module.exports = Object.freeze({ express, fastify, policy, clientAddress, header });
