'use strict';
// client.connectAdmin: the SDS console agent against the strict fake console
// (tools/fake-sds-admin.py), through the public API.
const test = require('node:test');
const assert = require('node:assert/strict');
const os = require('node:os');
const path = require('node:path');
const fs = require('node:fs');
const { runScript } = require('../testing/child.js');
const { Worker } = require('node:worker_threads');
const { Client, AdminAgent, DowngradedError } = require('..');
const { startFakeConsole, until, agentThreads } = require('./fake-console.js');
const { makePki } = require('../testing/redis-server.js');

const PACKAGE = path.join(__dirname, '..');
const GROUP = 'shop';
let fake;
let appCount = 0;

test.before(async () => {
  fake = await startFakeConsole();
});
test.after(() => fake.close());

/** A fresh app name on the fake, with `strategies`. */
async function newApp(strategies) {
  const app = `app${++appCount}`;
  await fake.setApp(GROUP, app, strategies);
  return app;
}

/** An agent with a 'log' listener that drops the lines (no process warnings). */
function connect(client, app, extra = {}) {
  const agent = client.connectAdmin({
    servers: fake.url,
    appGroup: GROUP,
    appName: app,
    ip: '10.0.0.7',
    hostname: 'node-test',
    pullIntervalMs: 100,
    timeoutMs: 500,
    ...extra,
  });
  return agent.on('log', () => {});
}

test('a change on the console is in force within one pull interval; a removed point loses its strategy', async () => {
  const app = await newApp([{ point: 'a', visitThreshold: 5 }, { point: 'b', concurrentThreshold: 2 }]);
  const client = new Client();
  const agent = connect(client, app);
  try {
    assert.ok(agent instanceof AdminAgent);
    await until(() => agent.status().version === 1, 2000, 'version 1 applied');
    assert.equal(client.strategy('a').visitThreshold, 5);
    assert.equal(client.strategy('b').concurrentThreshold, 2);

    const { version } = await fake.setApp(GROUP, app, [{ point: 'a', visitThreshold: 7 }]);
    assert.equal(version, 2);
    const changed = Date.now();
    await until(() => client.strategy('a')?.visitThreshold === 7, 1000, 'the new threshold');
    // One interval (100 ms) plus the request and a loaded machine's slack.
    assert.ok(Date.now() - changed < 600, `in force after ${Date.now() - changed} ms`);
    await until(() => agent.status().version === 2, 1000, 'version 2');
    assert.equal(client.strategy('b'), null);

    const status = agent.status();
    assert.deepEqual(Object.keys(status).sort(), [
      'isReporter', 'lastError', 'lastPullMs', 'lastPullOk', 'lastUploadMs', 'lastUploadOk',
      'pointsLeftOut', 'pullFailures', 'server', 'strategiesWaiting', 'uploadFailures', 'uploads', 'version',
    ]);
    assert.equal(status.lastPullOk, true);
    assert.equal(status.isReporter, true);
    assert.equal(status.server, fake.url);
    assert.equal(status.lastError, '');
    assert.equal(status.pullFailures, 0);
    assert.equal(status.strategiesWaiting, 0);
    assert.equal(status.pointsLeftOut, 0);
    assert.ok(Math.abs(status.lastPullMs - Date.now()) < 5000, `lastPullMs ${status.lastPullMs}`);

    const last = await until(async () => {
      const { pulls } = await fake.requests();
      return pulls.find((p) => p.request.appName === app && p.request.version === 2)?.request;
    }, 1000, 'a pull holding version 2');
    assert.equal(last.appGroupName, GROUP);
    assert.equal(last.ip, '10.0.0.7');
    assert.equal(last.hostname, 'node-test');
    assert.equal(last.version, 2);
    assert.deepEqual([...last.pointList].sort(), ['a', 'b']);
  } finally {
    agent.close();
  }
});

test('an invalid strategy is refused, the old one kept, and the reason is a log event', async () => {
  const app = await newApp([{ point: 'a', visitThreshold: 5 }, { point: 'b', visitThreshold: 1 }]);
  const client = new Client();
  const agent = connect(client, app);
  const lines = [];
  agent.on('log', (line) => lines.push(line));
  try {
    await until(() => agent.status().version === 1, 2000, 'version 1');
    await fake.setApp(GROUP, app, [{ point: 'a', visitThreshold: '10' }, { point: 'b', visitThreshold: 3 }]);
    await until(() => agent.status().version === 2, 2000, 'version 2');
    assert.equal(client.strategy('a').visitThreshold, 5, 'the refused point keeps its strategy');
    assert.equal(client.strategy('b').visitThreshold, 3, 'the valid one is applied');
    await until(() => lines.some((l) => l.level === 'warn'), 2000, 'a warn line');
    const warn = lines.find((l) => l.level === 'warn');
    assert.match(warn.message, /^SDS strategy refused: point "a": .*visitThreshold/);
    assert.match(agent.status().lastError, /point "a"/);
    assert.ok(lines.some((l) => l.level === 'info' && /version 2/.test(l.message)), JSON.stringify(lines));
  } finally {
    agent.close();
  }
});

test('with no log listener, each distinct warning is a process warning once; a throwing listener is one too', async () => {
  const client = new Client();
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  const agent = client.connectAdmin({ servers: fake.url, appGroup: GROUP, appName: 'never-created', pullIntervalMs: 100 });
  try {
    await until(() => agent.status().pullFailures >= 3, 3000, 'three failed pulls');
    await new Promise((resolve) => setImmediate(resolve));
    const ours = warnings.filter((w) => w.code === 'SDS_AGENT_WARNING');
    assert.equal(ours.length, 1, ours.map((w) => w.message).join('\n'));
    assert.match(ours[0].message, /never-created does not exist/);

    agent.on('log', () => {
      throw new Error('listener bug');
    });
    await until(() => warnings.some((w) => w.code === 'SDS_LISTENER_ERROR'), 2000, 'a listener warning');
    assert.match(warnings.find((w) => w.code === 'SDS_LISTENER_ERROR').message, /listener bug/);
  } finally {
    agent.close();
    process.off('warning', onWarning);
  }
});

test('failures are visible in status(): unknown app, a 500, a server that never answers; a second server works', async (t) => {
  const app = await newApp([{ point: 'a', visitThreshold: 5 }]);

  await t.test('unknown app', async () => {
    const client = new Client();
    const agent = connect(client, 'no-such-app');
    try {
      await until(() => agent.status().pullFailures > 0, 2000, 'a failed pull');
      const status = agent.status();
      assert.equal(status.lastPullOk, false);
      assert.match(status.lastError, /the console answered: app shop\/no-such-app does not exist/);
    } finally {
      agent.close();
    }
  });

  await t.test('500 and a hang keep the strategies in force', async () => {
    const client = new Client();
    const agent = connect(client, app, { timeoutMs: 200 });
    try {
      await until(() => agent.status().version === 1, 2000, 'version 1');
      await fake.setMode({ pull: 'http_500' });
      await until(() => /500/.test(agent.status().lastError), 2000, 'the 500 in lastError');
      assert.equal(agent.status().lastPullOk, false);
      await fake.setMode({ pull: 'hang' });
      const failures = agent.status().pullFailures;
      await until(() => agent.status().pullFailures > failures && !/500/.test(agent.status().lastError), 3000,
        'a timed-out pull');
      assert.match(agent.status().lastError, /time/i);
      assert.equal(client.strategy('a').visitThreshold, 5);
    } finally {
      await fake.setMode({ pull: 'ok' });
      agent.close();
    }
  });

  await t.test('a dead server first, a working one second', async () => {
    const client = new Client();
    // Port 1 on loopback refuses connections; the list is shuffled at start.
    const agent = connect(client, app, { servers: `http://127.0.0.1:1,${fake.url}` });
    try {
      await until(() => agent.status().version === 1, 3000, 'the strategies through the second server');
      assert.equal(client.strategy('a').visitThreshold, 5);
    } finally {
      agent.close();
    }
  });
});

test('run without a fallback returns the console return value when downgraded', async () => {
  const app = await newApp([{ point: 'r', visitThreshold: 0, returnValueStr: '{"cached":true}' }, { point: 'n', visitThreshold: 0 }]);
  const client = new Client();
  const agent = connect(client, app);
  try {
    await until(() => agent.status().version === 1, 2000, 'version 1');
    assert.equal(agent.returnValue('r'), '{"cached":true}');
    assert.equal(agent.returnValue('n'), null);
    assert.equal(client.run('r', () => 'work'), '{"cached":true}');
    assert.equal(client.point('r').run(() => 'work'), '{"cached":true}');
    assert.equal(await client.run('r', async () => 'work'), '{"cached":true}');
    assert.equal(client.run('r', () => 'work', () => 'fallback'), 'fallback');
    assert.throws(() => client.run('n', () => 'work'), DowngradedError);
  } finally {
    agent.close();
  }
  assert.equal(agent.status().version, 1, 'the last status stays readable');
  assert.throws(() => client.run('r', () => 'work'), DowngradedError, 'no agent after close');
  await assert.rejects(client.run('r', async () => 'work'), DowngradedError);
});

test('the upload carries the numbers of stats().lastCycle for the same traffic', async () => {
  const app = await newApp([{ point: 'up', visitThreshold: 5 }]);
  const client = new Client();
  const agent = connect(client, app);
  try {
    await until(() => agent.status().version === 1, 2000, 'version 1');
    // All traffic inside one 10 s cycle: not in its last second.
    if (Date.now() % 10000 > 8500) await new Promise((r) => setTimeout(r, 10000 - (Date.now() % 10000) + 50));
    const cycleStart = Date.now() - (Date.now() % 10000);
    const held = [client.enter('up'), client.enter('up')];
    for (let i = 0; i < 6; i++) {
      const entry = client.enter('up');
      if (i === 0) entry.error(new Error('failed'));
      entry.exit();
    }
    for (const entry of held) entry.exit();
    assert.ok(Date.now() < cycleStart + 10000, 'the traffic stayed in one cycle');
    const reported = cycleStart + 10000;
    const upload = await until(async () => {
      const { uploads } = await fake.requests();
      return uploads.find((u) => u.request.appName === app && u.request.statisticsCycleTime === reported);
    }, 17000, 'the upload of the traffic cycle');
    const expected = client.stats('up', reported).lastCycle;
    assert.deepEqual(upload.request.pointInfoMap, { up: { point: 'up', ...expected } });
    assert.deepEqual(expected, { visitNum: 8, exceptionNum: 1, timeoutNum: 0, downgradeNum: 3, concurrentNum: 3 });
    assert.equal(upload.request.ip, '10.0.0.7');
    assert.equal(upload.request.hostname, 'node-test');
    await until(() => agent.status().uploads >= 1, 2000, 'the upload counted');
    assert.equal(agent.status().lastUploadOk, true);
    assert.deepEqual((await fake.requests()).violations, []);
  } finally {
    agent.close();
  }
});

test('close() joins the agent thread, is idempotent, and a client may connect again', async () => {
  const app = await newApp([]);
  const client = new Client();
  assert.equal(agentThreads(), 0, 'no agent thread left by the tests before');
  const agent = connect(client, app);
  await until(() => agentThreads() === 1, 1000, 'the agent thread named');
  assert.throws(() => connect(client, app), { code: 'SDS_INVALID_ARGUMENT', message: /already has an SDS console agent/ });
  assert.equal(agent.running, true);
  agent.close();
  assert.equal(agentThreads(), 0);
  assert.equal(agent.running, false);
  agent.close();
  assert.equal(agent.status().isReporter, true, 'status stays readable');
  const again = connect(client, app);
  await until(() => agentThreads() === 1, 1000, 'the new agent thread named');
  again.close();
  assert.equal(agentThreads(), 0);
});

test('close() returns within one timeout while a request hangs', async () => {
  const app = await newApp([]);
  await fake.setMode({ pull: 'hang' });
  const client = new Client();
  const agent = connect(client, app, { timeoutMs: 300 });
  try {
    await until(async () => (await fake.requests()).pulls.some((p) => p.request.appName === app), 2000, 'a pull');
    const start = Date.now();
    agent.close();
    assert.ok(Date.now() - start < 1000, `close took ${Date.now() - start} ms`);
    assert.equal(agentThreads(), 0);
  } finally {
    await fake.setMode({ pull: 'ok' });
  }
});

test('bad config: the agent\'s message as SDS_INVALID_ARGUMENT', () => {
  const client = new Client();
  const base = { servers: fake.url, appGroup: GROUP, appName: 'a' };
  const refused = (options, message) =>
    assert.throws(() => client.connectAdmin({ ...base, ...options }), { code: 'SDS_INVALID_ARGUMENT', message });
  refused({ servers: 'ftp://admin:8887' },
    'cannot start the SDS agent: server "ftp://admin:8887" is not an http:// or https:// URL');
  refused({ appName: ' ' }, 'cannot start the SDS agent: the app name is blank');
  refused({ ip: '1234567890.1234567' }, 'cannot start the SDS agent: ip "1234567890.1234567" is longer than 16 characters');
  refused({ pullIntervalMs: 0 }, 'cannot start the SDS agent: the pull interval must be above 0 ms');
  // Types and keys, checked by the agent crate too (lib/settings.rs only converts).
  refused({ servers: 5 }, 'cannot start the SDS agent: servers must be text, not 5');
  refused({ timeoutMs: 1.5 },
    'cannot start the SDS agent: timeoutMs must be a whole number of milliseconds from 0 to 18446744073709551615, not 1.5');
  refused({ pullInterval: '100' },
    'cannot start the SDS agent: pullInterval must be a finite number of seconds, at least 0, not the text "100"');
  refused({ pullIntervalSeconds: 100 }, /^cannot start the SDS agent: unknown setting "pullIntervalSeconds"; the settings are: servers, /);
  refused({ appName: 'a', app_name: 'b' }, 'cannot start the SDS agent: "appName" and "app_name" are one setting: give it once');
  assert.throws(() => client.connectAdmin(), { code: 'SDS_INVALID_ARGUMENT', message: 'cannot start the SDS agent: no server given' });
  assert.throws(() => client.connectAdmin([fake.url]),
    { code: 'SDS_INVALID_ARGUMENT', message: /^cannot start the SDS agent: unknown setting "0"; / });
  assert.throws(() => client.connectAdmin(fake.url),
    { code: 'SDS_INVALID_ARGUMENT', message: 'connectAdmin options must be an object, got a string' });
  assert.equal(agentThreads(), 0);
  // Nothing was left connected by the refusals; null, undefined and seconds are taken.
  connect(client, 'a', { ip: null, hostname: undefined }).close();
  client.connectAdmin({ ...base, pullInterval: 0.1, timeout: 1 }).on('log', () => {}).close();
});

/** A temporary directory for `body(dir)`, removed after it, also when it throws. */
async function withTempDir(body) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-admin-tls-'));
  try {
    return await body(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('an https:// console trusted through tlsCaFile: a change is in force within one pull interval, no error', async () => {
  await withTempDir(async (dir) => {
    const pki = makePki(dir);
    const admin = await startFakeConsole({ tls: pki });
    const client = new Client();
    let agent;
    try {
      assert.match(admin.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      await admin.setApp(GROUP, 'secure', [{ point: 'a', visitThreshold: 5 }]);
      agent = connect(client, 'secure', { servers: admin.url, tlsCaFile: pki.ca });
      await until(() => agent.status().version === 1, 2000, 'version 1 over HTTPS');
      assert.equal(client.strategy('a').visitThreshold, 5);

      await admin.setApp(GROUP, 'secure', [{ point: 'a', visitThreshold: 7 }]);
      const changed = Date.now();
      await until(() => client.strategy('a')?.visitThreshold === 7, 1000, 'the new threshold');
      // One interval (100 ms) plus the request (a TLS handshake) and a loaded machine's slack.
      assert.ok(Date.now() - changed < 600, `in force after ${Date.now() - changed} ms`);
      const status = agent.status();
      assert.equal(status.lastPullOk, true);
      assert.equal(status.lastError, '');
      assert.equal(status.pullFailures, 0);
      assert.equal(status.server, admin.url);
      assert.deepEqual((await admin.requests()).violations, []);
    } finally {
      agent?.close();
      await admin.close();
    }
  });
});

test('an https:// console with a certificate of another CA: UnknownIssuer in status(), the strategy kept', async () => {
  await withTempDir(async (dir) => {
    const ours = makePki(path.join(dir, 'ours'));
    const theirs = makePki(path.join(dir, 'theirs'));
    let admin = await startFakeConsole({ tls: ours });
    const client = new Client();
    let agent;
    try {
      await admin.setApp(GROUP, 'moved', [{ point: 'a', visitThreshold: 1 }]);
      agent = connect(client, 'moved', { servers: admin.url, tlsCaFile: ours.ca });
      await until(() => agent.status().version === 1, 2000, 'version 1 over HTTPS');

      // The same address now shows a certificate of another CA.
      await admin.close();
      admin = await startFakeConsole({ tls: theirs, port: admin.port });
      await admin.setApp(GROUP, 'moved', [{ point: 'a', visitThreshold: 50 }]);
      await until(() => agent.status().lastError.includes('UnknownIssuer'), 3000, 'a pull refused by the certificate check');
      const status = agent.status();
      assert.equal(status.lastPullOk, false);
      assert.ok(status.lastError.startsWith(`SDS strategy pull failed: ${admin.url}/sds/heartbeat/pullstrategy: `),
        status.lastError);
      assert.equal(status.version, 1);
      assert.equal(client.strategy('a').visitThreshold, 1, 'the strategy pulled before is kept');
      assert.deepEqual((await admin.requests()).pulls, [], 'the refused console never saw a request');
    } finally {
      agent?.close();
      await admin.close();
    }
  });
});

test('bad TLS config: the agent\'s message as SDS_INVALID_ARGUMENT', async () => {
  await withTempDir(async (dir) => {
    const pki = makePki(dir);
    const client = new Client();
    const base = { servers: 'https://127.0.0.1:1', appGroup: GROUP, appName: 'a' };
    const refused = (options, message) =>
      assert.throws(() => client.connectAdmin({ ...base, ...options }), { code: 'SDS_INVALID_ARGUMENT', message });
    const missing = path.join(dir, 'missing.pem');
    assert.throws(() => client.connectAdmin({ ...base, tlsCaFile: missing }), (error) =>
      error.code === 'SDS_INVALID_ARGUMENT' &&
      error.message.startsWith(`cannot start the SDS agent: tls_ca_file ${missing}: No such file`));
    refused({ tlsCaFile: pki.key }, `cannot start the SDS agent: tls_ca_file ${pki.key}: holds no PEM certificate`);
    refused({ servers: fake.url, tlsCaFile: pki.ca },
      'cannot start the SDS agent: tls_ca_file is given but no server is an https:// URL ' +
      '(the CA file only verifies HTTPS servers)');
    refused({ tlsCaFile: 5 }, 'cannot start the SDS agent: tlsCaFile must be a path (text) or null, not 5');
    refused({ tlsCaFile: Buffer.from(pki.ca) },
      'cannot start the SDS agent: tlsCaFile must be a path (text) or null, not a value of type Buffer');
    assert.equal(agentThreads(), 0);
    // Nothing was left connected by the refusals; null is no CA file; a
    // mixed list with the CA file starts.
    connect(client, 'a', { tlsCaFile: null }).close();
    const agent = connect(client, 'a', { servers: `${fake.url},https://127.0.0.1:1`, tlsCaFile: pki.ca });
    agent.close();
  });
});

test('a shared-table client: its agent applies the strategies and is the reporter when alone', async () => {
  const file = path.join(os.tmpdir(), `sds-admin-${process.pid}.sds`);
  const app = await newApp([{ point: 's', visitThreshold: 4 }]);
  const client = new Client({ capacity: 64, shared: file });
  const other = new Client({ capacity: 64, shared: file });
  const agent = connect(client, app);
  try {
    await until(() => agent.status().version === 1, 2000, 'version 1');
    assert.equal(agent.status().isReporter, true);
    assert.equal(other.strategy('s').visitThreshold, 4, 'the other client of the file sees it');
  } finally {
    agent.close();
    fs.rmSync(file, { force: true });
  }
});

test('a process that starts an agent and simply ends exits normally and promptly', async () => {
  const app = await newApp([{ point: 'p', visitThreshold: 5 }]);
  const source = `
    const { Client } = require(${JSON.stringify(PACKAGE)});
    const client = new Client();
    const agent = client.connectAdmin({ servers: ${JSON.stringify(fake.url)}, appGroup: 'shop', appName: ${JSON.stringify(app)}, pullIntervalMs: 100 });
    agent.on('log', (line) => console.log(line.message));
    // Some work while the agent pulls, then nothing is left but the agent.
    setTimeout(() => console.log('version', agent.status().version), 300);
  `;
  // Killed (and failed) if the agent held it open.
  const { code, output, ms } = await runScript(source);
  assert.equal(code, 0);
  assert.match(output, /version 1\n/, output);
  assert.ok(ms < 5000, `exited after ${ms} ms`);
});

test('a worker thread\'s client may connect; its agent stops when the worker ends', { timeout: 10000 }, async () => {
  const app = await newApp([{ point: 'w', visitThreshold: 9 }]);
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { Client } = require(${JSON.stringify(PACKAGE)});
    const client = new Client();
    const agent = client.connectAdmin({ servers: workerData.url, appGroup: 'shop', appName: workerData.app, pullIntervalMs: 100 });
    // Work of the worker's own until the strategies arrive; then nothing but the agent is left.
    const work = setInterval(() => {}, 1000);
    agent.on('log', (line) => {
      if (!/version 1/.test(line.message)) return;
      parentPort.postMessage(client.strategy('w').visitThreshold);
      clearInterval(work);
    });
  `;
  const worker = new Worker(source, { eval: true, workerData: { url: fake.url, app } });
  // Listened for now: a worker that ends before its message is read has both
  // emitted in one tick, the message first.
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  const threshold = await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  assert.equal(threshold, 9);
  // The worker ends: its event loop is not held open by the agent.
  const code = await exited;
  assert.equal(code, 0);
  assert.equal(agentThreads(), 0);
});
