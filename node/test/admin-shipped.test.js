'use strict';
// client.connectAdmin against what the SDS console does as it ships
// (SDS-ADMIN.md, "What the shipped console does (measured)"), reproduced by
// the strict fake (tools/fake-sds-admin.py), on the real clock. The cases
// that wait for uploads (second 5 of each 10 s cycle) run concurrently, so
// the file waits about two cycles in all.
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const os = require('node:os');
const path = require('node:path');
const fs = require('node:fs');
const { setTimeout: sleep } = require('node:timers/promises');
const { Client } = require('..');
const { startFakeConsole, until } = require('./fake-console.js');
const { makePki } = require('../testing/redis-server.js');

const GROUP = 'shop';
const CYCLE_MS = 10000;
let fake;
let appCount = 0;
// Made before the cases start: makePki blocks the event loop (openssl) and
// would delay the timed cases running concurrently.
let pkiDir;
let pki;

/** A fresh app name on the shared fake, with `strategies`. */
async function newApp(strategies, extra) {
  const app = `shipped${++appCount}`;
  await fake.setApp(GROUP, app, strategies, extra);
  return app;
}

/** An agent of `client` for `app` on `admin`; its log lines gather in `agent.lines`. */
function connect(client, admin, app, extra = {}) {
  const agent = client.connectAdmin({
    servers: admin.url,
    appGroup: GROUP,
    appName: app,
    ip: '10.0.0.8',
    hostname: 'node-shipped',
    pullIntervalMs: 100,
    timeoutMs: 300,
    ...extra,
  });
  agent.lines = [];
  return agent.on('log', (line) => agent.lines.push(line));
}

function linesWith(agent, text) {
  return agent.lines.filter((line) => line.message.includes(text));
}

function visit(client, name) {
  client.enter(name).exit();
}

/**
 * The start of the cycle that holds the next `roomMs` of real time (the
 * next cycle's when this one ends sooner), waited for if it is the next.
 */
async function cycleWithRoom(roomMs) {
  const inCycle = Date.now() % CYCLE_MS;
  if (inCycle + roomMs > CYCLE_MS) await sleep(CYCLE_MS - inCycle + 20);
  return Date.now() - (Date.now() % CYCLE_MS);
}

/** Sleeps until `time` (epoch ms). */
async function sleepUntil(time) {
  const left = time - Date.now();
  if (left > 0) await sleep(left);
}

/** The upload of `app` reporting cycle `cycleTime` (its statisticsCycleTime), once the fake has it. */
function uploadOf(admin, app, cycleTime) {
  return until(async () => {
    const { uploads } = await admin.requests();
    return uploads.find((u) => u.request.appName === app && u.request.statisticsCycleTime === cycleTime);
  }, 2 * CYCLE_MS, `the upload of cycle ${cycleTime}`);
}

/** The stored heartbeat rows of `app` for `cycleTime`, as sorted "point:visits". */
async function storedRows(admin, app, cycleTime) {
  const { stored } = await admin.requests();
  return stored
    .filter((row) => row.appName === app && row.statisticsCycleTime === cycleTime)
    .map((row) => `${row.point}:${row.visitNum}`)
    .sort();
}

/**
 * The rows of a cycle once there are any: the fake records a request
 * before it stores it, and stores an upload's rows in one batch.
 */
function rowsOnceStored(admin, app, cycleTime) {
  return until(async () => {
    const rows = await storedRows(admin, app, cycleTime);
    return rows.length > 0 && rows;
  }, 3000, `rows of cycle ${cycleTime} stored`);
}

async function assertNoViolation(admin) {
  assert.deepEqual((await admin.requests()).violations, []);
}

before(async () => {
  pkiDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-admin-shipped-'));
  pki = makePki(pkiDir);
  fake = await startFakeConsole();
});
after(async () => {
  await fake?.close();
  fs.rmSync(pkiDir, { recursive: true, force: true });
});

describe('the SDS console as it ships', { concurrency: true }, () => {
  it('a console frozen across an upload, past the timeout, then thawed: the cycle is stored once', async () => {
    // A fake of its own: freezing it stops every request to it.
    const admin = await startFakeConsole();
    const client = new Client();
    let agent;
    try {
      await admin.setApp(GROUP, 'frozen', [{ point: 'api', visitThreshold: 100 }]);
      // One pull only: a pull timing out while frozen would replace lastError.
      agent = connect(client, admin, 'frozen', { pullIntervalMs: 60000 });
      await until(() => agent.status().lastPullOk, 2000, 'the first pull');
      // Visits in a cycle whose upload (at second 5 of the next) is still ahead.
      const cycle = await cycleWithRoom(200);
      visit(client, 'api');
      const reported = cycle + CYCLE_MS;
      await sleepUntil(reported + 4000);
      admin.freeze();
      try {
        const failed = await until(() => agent.status().uploadFailures === 1 && agent.status(), 3000,
          'the upload timed out');
        assert.match(failed.lastError,
          /^SDS statistics upload failed: .* \(the console may have received it: not sent again\)$/);
        // Frozen past a retry's time (one second after a failure), so one would be queued too.
        await sleepUntil(reported + 7500);
      } finally {
        admin.thaw();
      }
      await rowsOnceStored(admin, 'frozen', reported);
      // Time for any other queued copy to be processed too.
      await sleep(300);
      assert.deepEqual(await storedRows(admin, 'frozen', reported), ['api:1']);
      const { uploads } = await admin.requests();
      assert.equal(uploads.filter((u) => u.request.statisticsCycleTime === reported).length, 1);
      assert.equal(agent.status().uploadFailures, 1);
      assert.match(agent.status().lastError, /not sent again\)$/);
      await assertNoViolation(admin);
    } finally {
      agent?.close();
      await admin.close();
    }
  });

  it('points without visits in a cycle are uploaded with zeros and stay in the point list', async () => {
    const app = await newApp([]);
    const client = new Client();
    const agent = connect(client, fake, app, { pullIntervalMs: 1000 });
    try {
      const first = await cycleWithRoom(1000);
      visit(client, 'a');
      visit(client, 'b');
      // The next cycle: only "a" is visited.
      await sleepUntil(first + CYCLE_MS + 20);
      visit(client, 'a');
      await uploadOf(fake, app, first + CYCLE_MS);
      assert.deepEqual(await rowsOnceStored(fake, app, first + CYCLE_MS), ['a:1', 'b:1']);
      assert.deepEqual((await fake.requests()).points[`${GROUP}/${app}`], ['a', 'b']);

      const second = await uploadOf(fake, app, first + 2 * CYCLE_MS);
      assert.deepEqual(second.request.pointInfoMap.b, {
        point: 'b', visitNum: 0, exceptionNum: 0, timeoutNum: 0, downgradeNum: 0, concurrentNum: 0,
      });
      assert.equal(second.request.pointInfoMap.a.visitNum, 1);
      assert.deepEqual(await rowsOnceStored(fake, app, first + 2 * CYCLE_MS), ['a:1'], 'no row for zero visits');
      assert.deepEqual((await fake.requests()).points[`${GROUP}/${app}`], ['a', 'b'], '"b" stays listed');
      await until(() => agent.status().uploads >= 2, 2000, 'both uploads counted');
    } finally {
      agent.close();
    }
  });

  it('a point name over 164 characters is left out of uploads, the others stored, and named once', async () => {
    const app = await newApp([]);
    const client = new Client();
    const agent = connect(client, fake, app, { pullIntervalMs: 1000 });
    const longest = 'm'.repeat(164);
    const tooLong = 'x'.repeat(165);
    try {
      const first = await cycleWithRoom(1000);
      for (const name of ['orders-create', longest, tooLong]) visit(client, name);
      await sleepUntil(first + CYCLE_MS + 20);
      visit(client, tooLong);

      const upload = await uploadOf(fake, app, first + CYCLE_MS);
      assert.deepEqual(Object.keys(upload.request.pointInfoMap).sort(), [longest, 'orders-create']);
      const status = agent.status();
      assert.equal(status.pointsLeftOut, 1);
      const warning = `SDS statistics leave out point "${tooLong}": the console stores names of at most 164 ` +
        "characters (its forms manage letters, digits and '-')";
      assert.equal(status.lastError, warning);
      assert.deepEqual(await rowsOnceStored(fake, app, first + CYCLE_MS), [`${longest}:1`, 'orders-create:1']);

      // Visited again the next cycle: still left out, not named again.
      const second = await uploadOf(fake, app, first + 2 * CYCLE_MS);
      assert.equal(second.request.pointInfoMap[tooLong], undefined);
      await until(() => agent.status().uploads >= 2, 2000, 'the second upload counted');
      assert.deepEqual(linesWith(agent, 'leave out point').map((l) => [l.level, l.message]), [['warn', warning]]);
      assert.equal(agent.status().pointsLeftOut, 1);
    } finally {
      agent.close();
    }
  });

  it('a null version: the set applies, version is -1, and an edit is in force within one pull interval', async () => {
    const app = await newApp([{ point: 'a', visitThreshold: 3 }], { nullVersion: true });
    const client = new Client();
    const agent = connect(client, fake, app);
    try {
      await until(() => client.strategy('a')?.visitThreshold === 3, 2000, 'the set applied');
      let status = agent.status();
      assert.equal(status.version, -1);
      assert.equal(status.lastPullOk, true);
      assert.equal(status.lastError, '');

      const { version } = await fake.setApp(GROUP, app, [{ point: 'a', visitThreshold: 7 }], { nullVersion: true });
      assert.equal(version, null, 'the console\'s version stays null');
      const edited = Date.now();
      await until(() => client.strategy('a')?.visitThreshold === 7, 2000, 'the edit');
      // One interval (100 ms), the request (timeout 300 ms) and a loaded machine's slack.
      assert.ok(Date.now() - edited < 600, `in force after ${Date.now() - edited} ms`);
      await sleep(400);
      const pulls = (await fake.requests()).pulls.filter((p) => p.request.appName === app);
      assert.ok(pulls.length >= 5, `${pulls.length} pulls`);
      assert.equal(pulls.at(-1).request.version, -1);
      // Every pull brings the whole set; only a set that differs is applied (and logged).
      assert.equal(linesWith(agent, 'SDS strategies version null').length, 2, JSON.stringify(agent.lines));
      status = agent.status();
      assert.equal(status.version, -1);
      assert.equal(status.pullFailures, 0);
    } finally {
      agent.close();
    }
  });

  it('null strategies (the last one deleted): the point has no strategy any more', async () => {
    const app = await newApp([{ point: 'a', visitThreshold: 3, returnValueStr: 'cached' }]);
    const client = new Client();
    const agent = connect(client, fake, app);
    try {
      await until(() => agent.status().version === 1, 2000, 'version 1');
      assert.equal(client.strategy('a').visitThreshold, 3);
      assert.equal(agent.returnValue('a'), 'cached');

      // An empty list: the fake answers "strategies": null, as the console does.
      await fake.setApp(GROUP, app, []);
      await until(() => agent.status().version === 2, 2000, 'version 2');
      assert.equal(client.strategy('a'), null);
      assert.equal(agent.returnValue('a'), null);
      const status = agent.status();
      assert.equal(status.lastPullOk, true);
      assert.equal(status.lastError, '');
    } finally {
      agent.close();
    }
  });

  it('a console delayTime of 5000 ms: the rest of the strategy applies, the delay is dropped with a warning', async () => {
    const app = await newApp([{ point: 'slow', visitThreshold: 2, delayTime: 5000, returnValueStr: 'busy' }]);
    const client = new Client();
    const agent = connect(client, fake, app);
    try {
      await until(() => agent.status().version === 1, 2000, 'version 1');
      const strategy = client.strategy('slow');
      assert.equal(strategy.visitThreshold, 2);
      assert.equal(strategy.delayTime, -1, 'no delay');
      assert.equal(agent.returnValue('slow'), 'busy');
      // The threshold is in force: the third visit of the window is downgraded.
      assert.deepEqual([1, 2, 3].map(() => client.run('slow', () => 'work')), ['work', 'work', 'busy']);
      const warning = 'SDS strategy of point "slow" applied without its delay: ' +
        'invalid strategy: delayTime must be >= 10000 ms (or negative: no delay)';
      assert.equal(agent.status().lastError, warning);
      // Log lines reach the event loop after the status changed; later pulls log nothing more.
      await until(() => linesWith(agent, 'without its delay').length > 0, 2000, 'the warning line');
      await sleep(300);
      assert.deepEqual(linesWith(agent, 'without its delay').map((l) => [l.level, l.message]), [['warn', warning]]);
    } finally {
      agent.close();
    }
  });

  it('mutual TLS: with tlsCertFile and tlsKeyFile the set is pulled; without them the pull fails', async () => {
    const admin = await startFakeConsole({ tls: pki, mutualTls: true });
    const client = new Client();
    const anonymous = new Client();
    let agent;
    let refused;
    try {
      await admin.setApp(GROUP, 'mutual', [{ point: 'a', visitThreshold: 5 }]);
      agent = connect(client, admin, 'mutual',
        { tlsCaFile: pki.ca, tlsCertFile: pki.clientCert, tlsKeyFile: pki.clientKey });
      await until(() => agent.status().version === 1, 3000, 'version 1 over mutual TLS');
      assert.equal(client.strategy('a').visitThreshold, 5);
      assert.equal(agent.status().lastError, '');
      assert.equal(agent.status().pullFailures, 0);

      refused = connect(anonymous, admin, 'mutual', { tlsCaFile: pki.ca, hostname: 'no-certificate' });
      await until(() => refused.status().pullFailures >= 1, 3000, 'a pull without a client certificate');
      const status = refused.status();
      assert.equal(status.lastPullOk, false);
      assert.equal(status.version, 0);
      assert.ok(status.lastError.startsWith(`SDS strategy pull failed: ${admin.url}/sds/heartbeat/pullstrategy: `),
        status.lastError);
      assert.equal(anonymous.strategy('a'), null, 'nothing applied');
      // Dropped at the handshake: the console never saw its request.
      const { pulls } = await admin.requests();
      assert.deepEqual(pulls.filter((p) => p.request.hostname === 'no-certificate'), []);
      assert.ok(pulls.length >= 1, 'the agent with the certificate pulled');
      await assertNoViolation(admin);
    } finally {
      refused?.close();
      agent?.close();
      await admin.close();
    }
  });

  it('mutual TLS: a certificate without its key, or a key that is not its, is refused at connect', () => {
    const client = new Client();
    const base = { servers: 'https://127.0.0.1:1', appGroup: GROUP, appName: 'a', tlsCaFile: pki.ca };
    const refused = (options, message) =>
      assert.throws(() => client.connectAdmin({ ...base, ...options }), { code: 'SDS_INVALID_ARGUMENT', message });
    const together = 'cannot start the SDS agent: tls_cert_file and tls_key_file go together (mutual TLS)';
    refused({ tlsCertFile: pki.clientCert }, together);
    refused({ tlsKeyFile: pki.clientKey }, together);
    assert.throws(() => client.connectAdmin({ ...base, tlsCertFile: pki.clientCert, tlsKeyFile: pki.key }), (error) =>
      error.code === 'SDS_INVALID_ARGUMENT' && error.message.startsWith(
        `cannot start the SDS agent: tls_cert_file ${pki.clientCert} and tls_key_file ${pki.key}: `));
    refused({ tlsCertFile: 5, tlsKeyFile: pki.clientKey },
      'cannot start the SDS agent: tlsCertFile must be a path (text) or null, not 5');
    refused({ tlsCertFile: pki.clientCert, tlsKeyFile: null }, together);
    // Nothing was left connected by the refusals.
    client.connectAdmin({ ...base, tlsCertFile: pki.clientCert, tlsKeyFile: pki.clientKey }).on('log', () => {}).close();
  });
});
