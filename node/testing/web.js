'use strict';
// What the web adapters' tests (Express and Fastify) guard routes with.
const { Client, KeyedLimit } = require('..');

/**
 * One call at a time two ways, for the tests that check every permit comes
 * back: a client whose `point` admits one request in flight, and an
 * inFlight limit of 1.
 */
function oneAtATime(point) {
  const client = new Client();
  client.setStrategy(point, { concurrentThreshold: 1 });
  return { client, inFlight: new KeyedLimit({ kind: 'inFlight', limit: 1 }) };
}

module.exports = { oneAtATime };
