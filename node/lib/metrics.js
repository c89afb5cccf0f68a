'use strict';
// Metrics of a client (its points, its console agent and cluster sync) and of
// the process's keyed limits, collected by the addon (node/src/metrics.rs, on
// the crate sds-metrics, which names every family, its help and labels: none
// is written here). `Client#metrics()` and `Client#prometheusText()` call in;
// the exported namespace `metrics` adds the prom-client and OpenTelemetry
// adapters, which take the caller's registry or meter (neither package is a
// dependency of sds-native).
const { native } = require('./native.js');
const { invalidArgument, describe } = require('./errors.js');

const PROMETHEUS_CONTENT_TYPE = native.NativeMetrics.contentType(false);
const OPENMETRICS_CONTENT_TYPE = native.NativeMetrics.contentType(true);

/** The client's exporter, made on first use: counters it gives never go back. */
function exporterOf(client) {
  if (client._exporter === null) client._exporter = new native.NativeMetrics();
  return client._exporter;
}

/** The native service in `client`'s slot of the last one started, closed or not (metrics show it down). */
function started(client, slot) {
  const service = client._started[slot];
  return service === null ? null : service._native;
}

/** One collected family with its samples as objects: `{ labels: { name: value }, value }`. */
function familyObject(f) {
  const names = f.labelNames;
  const width = names.length;
  const { labelValues, values } = f;
  const samples = new Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const labels = {};
    for (let j = 0; j < width; j++) labels[names[j]] = labelValues[i * width + j];
    samples[i] = { labels, value: values[i] };
  }
  return { name: f.name, sampleName: f.sampleName, type: f.type, help: f.help, labelNames: names, samples };
}

/** Every family of `client` at `nowMs` (undefined: now); see `Client#metrics`. */
function collect(client, nowMs) {
  const families = exporterOf(client).collect(
    client._table, started(client, '_agent'), started(client, '_cluster'), nowMs,
  );
  return families.map(familyObject);
}

/** The Prometheus (or OpenMetrics) text of `client` at `nowMs`; see `Client#prometheusText`. */
function text(client, openMetrics, nowMs) {
  if (typeof openMetrics !== 'boolean') {
    throw invalidArgument(`openMetrics must be a boolean, got ${describe(openMetrics)}`);
  }
  return exporterOf(client).text(
    client._table, started(client, '_agent'), started(client, '_cluster'), openMetrics, nowMs,
  );
}

function checkClient(client) {
  // Required here: lib/client.js requires this module.
  const { Client } = require('./client.js');
  if (!(client instanceof Client)) throw invalidArgument(`client must be a Client, got ${describe(client)}`);
}

/**
 * A function that collects `client` once for every read made in one turn of
 * the event loop: a registry reads each family in turn, synchronously, and
 * they all get the one collection.
 */
function scraper(client) {
  let cached = null;
  return () => {
    if (cached === null) {
      cached = new Map(collect(client).map((f) => [f.name, f]));
      queueMicrotask(() => { cached = null; });
    }
    return cached;
  };
}

/**
 * Registers `client`'s families in a prom-client `registry`, read at scrape
 * time. Each is a metric object as prom-client's own: `name` (a counter's
 * with `_total`, as our text names it; an OpenMetrics registry takes the
 * suffix off and puts it on the samples, as for its Counters), `help`,
 * `type`, `get()`, `reset()` (nothing: the counts are the table's) and
 * `aggregator` for prom-client's AggregatorRegistry of a node:cluster app
 * ('max' on a shared table, where every worker shows the host's counts;
 * 'sum' on private ones). Returns `{ unregister() }`, which removes them.
 */
function registerPromClient(client, registry) {
  checkClient(client);
  if (registry === null || typeof registry !== 'object' || typeof registry.registerMetric !== 'function') {
    throw invalidArgument(`registry must be a prom-client Registry, got ${describe(registry)}`);
  }
  const scrape = scraper(client);
  const aggregator = client.shared === null ? 'sum' : 'max';
  const metrics = collect(client).map((family) => {
    const metric = {
      name: family.sampleName,
      help: family.help,
      type: family.type,
      aggregator,
      get() {
        const now = scrape().get(family.name);
        const values = now === undefined ? [] : now.samples.map(({ labels, value }) => ({ labels, value }));
        return { name: metric.name, help: metric.help, type: metric.type, values, aggregator };
      },
      reset() {},
    };
    return metric;
  });
  const registered = [];
  try {
    for (const metric of metrics) {
      registry.registerMetric(metric);
      registered.push(metric.name);
    }
  } catch (error) {
    for (const name of registered) registry.removeSingleMetric(name);
    throw error;
  }
  return {
    unregister() {
      for (const name of registered) {
        // The registry's key: an OpenMetrics registry may have renamed the object since.
        if (registry.getSingleMetric(name) !== undefined) registry.removeSingleMetric(name);
      }
      registered.length = 0;
    },
  };
}

/**
 * Creates an observable counter or gauge on an OpenTelemetry `meter` for
 * each of `client`'s families (named as the family, description its help),
 * observed together by one batch callback: one collection per export, each
 * sample's labels its attributes. Returns `{ unregister() }`, which removes
 * the callback.
 */
function instrumentOtel(client, meter) {
  checkClient(client);
  if (meter === null || typeof meter !== 'object' || typeof meter.addBatchObservableCallback !== 'function') {
    throw invalidArgument(`meter must be an OpenTelemetry Meter, got ${describe(meter)}`);
  }
  const instruments = new Map();
  for (const family of collect(client)) {
    const options = { description: family.help };
    const instrument = family.type === 'counter'
      ? meter.createObservableCounter(family.name, options)
      : meter.createObservableGauge(family.name, options);
    instruments.set(family.name, instrument);
  }
  const observables = [...instruments.values()];
  const callback = (result) => {
    for (const family of collect(client)) {
      const instrument = instruments.get(family.name);
      for (const { labels, value } of family.samples) result.observe(instrument, value, labels);
    }
  };
  meter.addBatchObservableCallback(callback, observables);
  let registered = true;
  return {
    unregister() {
      if (registered) meter.removeBatchObservableCallback(callback, observables);
      registered = false;
    },
  };
}

module.exports = {
  collect,
  text,
  // The public namespace `metrics` (index.js).
  api: Object.freeze({
    registerPromClient,
    instrumentOtel,
    PROMETHEUS_CONTENT_TYPE,
    OPENMETRICS_CONTENT_TYPE,
  }),
};
