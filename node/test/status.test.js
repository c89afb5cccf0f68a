'use strict';
// status() of both services is built from the crates' own field lists
// (sds_settings::Fields): its keys are the native names camelCased, in
// their order, and index.d.ts declares exactly those, each with the type
// its value has. A field added in Rust and not in index.d.ts fails here.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Client } = require('..');

const camel = (name) => name.replace(/_(.)/g, (_, c) => c.toUpperCase());
const typings = fs.readFileSync(path.join(__dirname, '..', 'index.d.ts'), 'utf8');

/** The fields `index.d.ts` declares in `interface name`, and their types. */
function declared(name) {
  const body = typings.match(new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`));
  assert.ok(body, `index.d.ts declares ${name}`);
  return new Map([...body[1].matchAll(/^ {2}(\w+): (.+)$/gm)].map(([, field, type]) => [field, type]));
}

const services = [
  {
    name: 'the console agent',
    interface: 'AdminStatus',
    start: (client) => client.connectAdmin({ servers: 'http://127.0.0.1:1', appGroup: 'g', appName: 'a' }).on('log', () => {}),
  },
  {
    name: 'the cluster sync',
    interface: 'ClusterStatus',
    start: (client) => client.connectCluster({ urls: 'redis://127.0.0.1:1', points: ['p'] }),
  },
];

for (const service of services) {
  test(`${service.name}: status() has the native fields, camelCased, as index.d.ts declares them`, () => {
    const started = service.start(new Client());
    const names = started._native.statusNames();
    assert.ok(names.length > 5, names.join());
    assert.ok(names.every((n) => /^[a-z]+(_[a-z]+)*$/.test(n)), `snake_case: ${names}`);
    const fields = names.map(camel);
    const running = started.status();
    started.close();
    for (const status of [running, started.status()]) {
      assert.deepEqual(Object.keys(status), fields);
      assert.equal(Object.getPrototypeOf(status), Object.prototype, 'a plain object');
    }
    const types = declared(service.interface);
    assert.deepEqual([...types.keys()].sort(), [...fields].sort());
    for (const field of fields) {
      const kind = running[field] === null ? 'null' : typeof running[field];
      assert.ok(types.get(field).split(' | ').includes(kind), `${field}: ${kind}, declared ${types.get(field)}`);
    }
  });
}
