// Checked by `tsc --noEmit -p test` (typings.test.js), never run: code a user
// would write against index.d.ts, and misuse it must refuse.
import { AdminAgent, Client, ClusterSync, DowngradedError, Entry, KeyedLimit, SlidingWindow, metrics } from '../index.js';
import type { MetricFamily, MetricSample } from '../index.js';
import { Registry as PromRegistry, collectDefaultMetrics } from 'prom-client';
import { metrics as otelMetrics } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { AdminLogLine, Key, KeyCount, KeyDecision, KeyRule, KeyStats, AdminStatus, ClusterStatus, ExactDecision, Point, Reason, Stats, Strategy, StrategyValues, Tally } from '../index.js';

const client = new Client({ capacity: 16 });
const host = new Client({ capacity: 64, shared: 'typed-usage.sds', mode: 0o660 });
const file: string | null = host.shared;
const strategy: Strategy = { point: 'p', visitThreshold: 10, downgradeRate: null, delayTime: undefined };
client.setStrategy('p', strategy);
client.setStrategy('p', '{"visitThreshold": 10}');
const values: StrategyValues | null = client.strategy('p');
const threshold: number | undefined = values?.visitThreshold;

const entry: Entry = client.enter('p', { nowMs: 100000, pressureTest: false });
const reason: Reason | null = entry.reason;
if (!entry.downgraded) entry.error(new Error('x'));
const exited: boolean = entry.exit(100001);

const point: Point = client.point('p');
// A sync fn's result is a promise when the request waited (a paced point).
const n: number | Promise<number> = point.run(() => 1, () => 2);
const s: string | number | Promise<string> = client.run('p', () => 'work', () => 0);
const later: Promise<string> = point.run(async () => 'done');
const counted: Promise<number | string> = point.run(async () => 1);
const bare: number | string | Promise<number | string> = client.run('p', () => 1);
const waitMs: number = entry.waitMs;
const paced: Strategy = { tokenBucketGeneratedTokensInSecond: 20, maxQueueingTimeMs: 1000, warmUpPeriodSec: 10, coldFactor: 3 };
const slow: Strategy = { timeoutThreshold: 100, slowCallRateThreshold: 50, slowCallRateStart: 10 };
const slowReason: Reason = 'SLOW_CALL_RATE';
const adaptive: Strategy = { adaptiveConcurrency: 2, adaptiveMinLimit: 1, adaptiveMaxLimit: 100, adaptiveInitialLimit: 10 };
const adaptiveRead: number | undefined = values?.adaptiveInitialLimit;
async function awaited(): Promise<number> {
  return await point.run(() => 1, () => 2);
}

const agent: AdminAgent = client.connectAdmin({
  servers: 'https://admin:8887', appGroup: 'g', appName: 'a', pullIntervalMs: 100, ip: null, tlsCaFile: 'ca.pem',
  tlsCertFile: 'client-cert.pem', tlsKeyFile: 'client-key.pem',
});
const adminStatus: AdminStatus = agent.status();
const reporting: boolean = adminStatus.isReporter && adminStatus.lastError === '' &&
  adminStatus.strategiesWaiting + adminStatus.pointsLeftOut === 0;
const fallbackText: string | null = agent.returnValue('p');
agent.on('log', (line: AdminLogLine) => console.log(line.level, line.message));
agent.close();
const sync: ClusterSync = client.connectCluster({ urls: 'redis://127.0.0.1:6379', points: ['p'], syncMs: 50 });
const clusterStatus: ClusterStatus = sync.status();
const clusterError: string | null = clusterStatus.lastError;
sync.syncNow();
const exactDecision: Promise<ExactDecision> = sync.enterExact('p', 100000);
exactDecision.then((d) => console.log(d.admitted, d.exact, d.reason));
sync.close();
client.connectCluster({ urls: ['redis://10.0.0.1:7000', 'redis://10.0.0.2:7000'], points: ['p'], redisCluster: true });
client.connectCluster({
  urls: ['rediss://10.0.0.5:6380'], points: 'p', keyPrefix: null, tlsCaFile: 'ca.pem', tlsCertFile: 'client.pem', tlsKeyFile: 'client-key.pem',
});
const stats: Stats = point.stats();
const inputs: number = stats.adaptiveLimit + stats.adaptiveMinRttUs + stats.adaptiveRttUs + stats.adaptiveLongRttUs;
const cycle: number = client.stats('p', 100000).lastCycle.visitNum;

client.on('downgrade', (name: string, why: Reason, timeMs: number) => {
  console.log(name, why, timeMs);
});

try {
  client.run('p', () => 1);
} catch (e) {
  if (e instanceof DowngradedError) console.log(e.code, e.point, e.reason);
}

const window = new SlidingWindow({ bucketMs: 500, buckets: 2, ring: 4 });
const tally: Tally = window.increment();
const total: number = window.sum() + window.bucket(1000) + window.lastWholeCycle() + window.add(2, 1000).total;

const keyRule: KeyRule = { kind: 'rate', limit: 10, periodMs: 1000, burst: 20, exceptions: [['vip', 100]] };
const perKey = new KeyedLimit(keyRule, { capacity: 4096 });
const hostWide = KeyedLimit.shared('api-keys.sds', { kind: 'fixedWindow', limit: 100, period_ms: 60000, windowFromFirstHit: true }, { capacity: 1 << 16, mode: 0o660 });
const fromJson = new KeyedLimit('{"kind": "slidingWindow", "limit": 5, "periodMs": 1000}');
const someKey: Key = Buffer.from('10.0.0.1');
const decision: KeyDecision = perKey.decide('user-1');
const charged: KeyDecision = perKey.decide(someKey, 3, 100000);
const retrySeconds: number = Math.ceil(decision.retryAfterMs / 1000) + charged.windowMs + decision.resetMs;
const peeked: boolean = perKey.peek(new Uint8Array([1, 2]), 100000).admitted;
const counted2: KeyCount = hostWide.increment('user-1', 1, 100000);
const hits: number = counted2.count + hostWide.decrement('user-1').previous + hostWide.count('user-1').resetMs;
const held: boolean = new KeyedLimit({ kind: 'inFlight', limit: 2 }).release('user-1', 2) && perKey.reset('user-1');
const keyStats: KeyStats = fromJson.stats();
const forgotten: number = fromJson.resetAll() + keyStats.lossyEvictions + perKey.capacity;
const keysFile: string | null = hostWide.path;
hostWide.close();

// Metrics: the families, the text, prom-client's registry and an OpenTelemetry meter.
const families: MetricFamily[] = client.metrics({ nowMs: 100000 });
const firstSample: MetricSample | undefined = families[0]?.samples[0];
const kindName: 'counter' | 'gauge' | undefined = families[0]?.type;
const label: string | undefined = firstSample?.labels['point'];
const exposition: string = client.prometheusText() + client.prometheusText({ openMetrics: true, nowMs: 100000 });
const contentType: string = metrics.PROMETHEUS_CONTENT_TYPE + metrics.OPENMETRICS_CONTENT_TYPE;
const promRegistry = new PromRegistry();
collectDefaultMetrics({ register: promRegistry });
metrics.registerPromClient(client, promRegistry).unregister();
metrics.instrumentOtel(client, new MeterProvider().getMeter('app')).unregister();
metrics.instrumentOtel(host, otelMetrics.getMeter('app'));
const limitName: string = new KeyedLimit(keyRule, { name: 'login' }).name + KeyedLimit.shared('k', keyRule, { name: 'api' }).name;

// @ts-expect-error a fallback gets the arguments fn gets: none
client.run('p', () => 1, (why: Reason) => why);
// @ts-expect-error fn gets no entry
point.run((e: Entry) => e.exit());
// @ts-expect-error strategy values are numbers
client.setStrategy('p', { visitThreshold: '10' });
// @ts-expect-error an unknown strategy key
client.setStrategy('p', { visitThresold: 10 });
// @ts-expect-error the console's app is required
client.connectAdmin({ servers: 'http://admin:8887', appGroup: 'g' });
// @ts-expect-error the CA file is a path as a string
client.connectAdmin({ servers: 'https://admin:8887', appGroup: 'g', appName: 'a', tlsCaFile: Buffer.from('ca.pem') });
// @ts-expect-error without a fallback, a downgraded run may give the console's string
const onlyNumber: number = client.run('p', () => 1);
// @ts-expect-error a paced request's sync fn runs after a timer: a promise
const neverLate: number = point.run(() => 1, () => 2);
// @ts-expect-error the wait is read, not set
entry.waitMs = 5;
// @ts-expect-error the cluster points are required
client.connectCluster({ urls: 'redis://127.0.0.1:6379' });
// @ts-expect-error one URL or several go under urls
client.connectCluster({ url: 'redis://127.0.0.1:6379', points: ['p'] });
// @ts-expect-error TLS files are paths as strings
client.connectCluster({ urls: 'rediss://127.0.0.1:6380', points: ['p'], tlsCaFile: Buffer.from('ca.pem') });
// @ts-expect-error a shared file's mode is 0o600 or 0o660
new Client({ shared: 'x', mode: 0o644 });
// @ts-expect-error a key rule's kind is one of four
new KeyedLimit({ kind: 'leakyBucket', limit: 1 });
// @ts-expect-error a key is a string or bytes
perKey.decide(42);
// @ts-expect-error the mode belongs to a shared table
new KeyedLimit(keyRule, { capacity: 8, mode: 0o660 });
// @ts-expect-error openMetrics is a boolean
client.prometheusText({ openMetrics: 'yes' });
// @ts-expect-error a registry, not a client, comes second
metrics.registerPromClient(client, client);
// @ts-expect-error the addon's internals are not exported
import { native } from '../index.js';

console.log(adaptive, adaptiveRead, inputs, file, threshold, reason, exited, n, s, later, counted, bare, reporting, fallbackText, onlyNumber, clusterError, stats, cycle, tally, total, native,
  retrySeconds, peeked, hits, held, forgotten, keysFile, kindName, label, exposition, contentType, limitName);
