'use strict';
// A shared table in one process: the options, two clients on one file (one
// attachment, the same counts), worker threads on one file, and shm's
// refusals as errors with the core's codes; a holder killed in another
// process gives its permit back on a refused request.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { Worker } = require('node:worker_threads');
const { Client } = require('..');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sds-node-shared-'));
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));
let files = 0;
const newFile = () => path.join(dir, `table-${++files}.sds`);

test('two clients on one file in one process share points and counts', () => {
  const file = newFile();
  const a = new Client({ capacity: 64, shared: file });
  const b = new Client({ capacity: 64, shared: file });
  assert.equal(a.shared, file);
  assert.equal(a.capacity, 64);
  a.setStrategy('p', { visitThreshold: 3 });
  assert.equal(b.strategy('p').visitThreshold, 3);
  const reasons = [];
  for (let i = 0; i < 5; i++) {
    const entry = (i % 2 ? a : b).enter('p', { nowMs: 100000 });
    reasons.push(entry.reason);
    entry.exit(100000);
  }
  assert.deepEqual(reasons, [null, null, null, 'VISIT', 'VISIT']);
  assert.equal(a.stats('p', 100000).visit, 5);
  assert.equal(b.stats('p', 100000).visit, 5);
  assert.equal(b.stats('p', 100000).concurrent, 0);
  assert.equal((fs.statSync(file).mode & 0o777), 0o600);
});

test('a private client says it is not shared', () => {
  assert.equal(new Client({ capacity: 4 }).shared, null);
});

test('mode 0o660 creates a file its group may use (as the umask lets it)', (t) => {
  const old = process.umask(0o002);
  t.after(() => process.umask(old));
  const file = newFile();
  const client = new Client({ capacity: 8, shared: file, mode: 0o660 });
  assert.equal(client.shared, file);
  assert.equal((fs.statSync(file).mode & 0o777), 0o660);
});

test('a bare name is a file under /dev/shm', (t) => {
  const name = `sds-node-test-${process.pid}.sds`;
  t.after(() => fs.rmSync(`/dev/shm/${name}`, { force: true }));
  const client = new Client({ capacity: 8, shared: name });
  assert.equal(client.shared, `/dev/shm/${name}`);
  assert.ok(fs.statSync(`/dev/shm/${name}`).isFile());
});

function throwsCode(fn, code, message) {
  assert.throws(fn, (e) => {
    assert.equal(e.code, code);
    assert.match(e.message, message);
    return true;
  });
}

test('bad names and modes are SDS_INVALID_ARGUMENT and create nothing', () => {
  const before = fs.readdirSync('/dev/shm').length;
  throwsCode(() => new Client({ shared: '' }), 'SDS_INVALID_ARGUMENT', /^shared table name "" is empty$/);
  throwsCode(() => new Client({ shared: '.' }), 'SDS_INVALID_ARGUMENT', /^shared table name "\." is not a file name$/);
  throwsCode(() => new Client({ shared: '..' }), 'SDS_INVALID_ARGUMENT', /^shared table name "\.\." is not a file name$/);
  throwsCode(() => new Client({ shared: 'a\0b' }), 'SDS_INVALID_ARGUMENT', /NUL/);
  throwsCode(() => new Client({ shared: 7 }), 'SDS_INVALID_ARGUMENT', /^shared must be a string, got a number$/);
  throwsCode(() => new Client({ shared: 'x', mode: 0o644 }), 'SDS_INVALID_ARGUMENT',
    /^mode must be 0600 or 0660 \(octal\), not 0644$/);
  throwsCode(() => new Client({ shared: 'x', mode: '0600' }), 'SDS_INVALID_ARGUMENT',
    /^mode must be a non-negative integer$/);
  throwsCode(() => new Client({ mode: 0o600 }), 'SDS_INVALID_ARGUMENT', /shared table only/);
  throwsCode(() => new Client({ shared: 'x', mod: 1 }), 'SDS_INVALID_ARGUMENT', /unknown Client option key "mod"/);
  assert.equal(fs.readdirSync('/dev/shm').length, before);
});

test('shm refusals keep their code and name the file', () => {
  const file = newFile();
  new Client({ capacity: 16, shared: file });
  throwsCode(() => new Client({ capacity: 32, shared: file }), 'SDS_LAYOUT_MISMATCH',
    new RegExp(`^${file}: table layout differs in capacity: the file has 16, this process needs 32$`));
  for (const bad of [-1, 0, 2 ** 70]) {
    const file = newFile();
    throwsCode(() => new Client({ capacity: bad, shared: file }), 'SDS_INVALID_CAPACITY',
      /^table capacity must be within 1\.\.=1048576$/);
    assert.equal(fs.existsSync(file), false, 'no file is made for a bad capacity');
  }
  const missing = path.join(dir, 'no-such-dir', 'x.sds');
  throwsCode(() => new Client({ shared: missing }), 'SDS_INVALID_ARGUMENT',
    new RegExp(`^${missing}: open failed: No such file or directory`));
  const wide = newFile();
  fs.writeFileSync(wide, '');
  fs.chmodSync(wide, 0o644);
  throwsCode(() => new Client({ shared: wide }), 'SDS_INVALID_ARGUMENT', /mode 0644 grants more than the 0600/);
  const link = newFile();
  fs.symlinkSync(file, link);
  throwsCode(() => new Client({ capacity: 16, shared: link }), 'SDS_INVALID_ARGUMENT', /symbolic link/);
  const junk = newFile();
  fs.writeFileSync(junk, Buffer.alloc(20000, 7), { mode: 0o600 });
  throwsCode(() => new Client({ capacity: 16, shared: junk }), 'SDS_INVALID_ARGUMENT', /./);
});

test('worker threads on one file share its counts and permits', async () => {
  const file = newFile();
  const main = new Client({ capacity: 64, shared: file });
  main.setStrategy('p', { visitThreshold: 250, concurrentThreshold: 1000 });
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { Client } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const client = new Client({ capacity: 64, shared: workerData });
    let admitted = 0;
    for (let i = 0; i < 100; i++) {
      const entry = client.enter('p', { nowMs: 100000 });
      if (!entry.downgraded) admitted++;
      entry.exit(100000);
    }
    parentPort.postMessage(admitted);
  `;
  const run = () => new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, workerData: file });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const admitted = await Promise.all([run(), run(), run()]);
  // One process, one owner: the threshold is exact.
  assert.equal(admitted.reduce((a, b) => a + b, 0), 250);
  const stats = main.stats('p', 100000);
  assert.equal(stats.visit, 300);
  assert.equal(stats.downgrade, 50);
  assert.equal(stats.concurrent, 0);
});

test('a killed holder gives its permit back on a request refused for concurrency', async () => {
  const file = newFile();
  const main = new Client({ capacity: 64, shared: file });
  main.setStrategy('p', { concurrentThreshold: 1 });
  // Another process attaches after this one, takes the one permit, and is
  // killed holding it: no process attaches after it dies.
  const source = `
    const { Client } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const client = new Client({ capacity: 64, shared: ${JSON.stringify(file)} });
    globalThis.held = client.enter('p', { nowMs: 100000 });
    process.stdout.write(globalThis.held.downgraded ? 'refused' : 'held');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
  const said = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(String(d))));
  assert.equal(said, 'held');
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal)));
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL');
  assert.equal(main.stats('p', 100000).concurrent, 1);
  const refused = main.enter('p', { nowMs: 100000 });
  assert.equal(refused.reason, 'CONCURRENT');
  refused.exit(100000);
  assert.equal(main.stats('p', 100000).concurrent, 0);
  const entry = main.enter('p', { nowMs: 100000 });
  assert.equal(entry.downgraded, false);
  entry.exit(100000);
});
