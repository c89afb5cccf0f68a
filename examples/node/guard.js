'use strict';
// Guarding a handler with sds-native: a point for an "inventory" call that
// admits 5 requests per 10 s window and at most 2 at once, and falls back to
// a cached answer otherwise. Run from the repository root: make demo-node.
// In your own project: require('sds-native').
const { Client } = require('../../node');

const client = new Client();
client.setStrategy('inventory.lookup', { visitThreshold: 5, concurrentThreshold: 2 });
client.on('downgrade', (point, reason, timeMs) => {
  console.log(`  downgrade event: ${point} ${reason} at ${new Date(timeMs).toISOString()}`);
});

const inventory = client.point('inventory.lookup');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function lookup(sku) {
  await sleep(20); // the real, slow call
  return `${sku}: 12 in stock`;
}

async function handle(sku) {
  // The fallback gets what lookup's thunk gets (nothing); the reason went
  // to the 'downgrade' listener above.
  return inventory.run(() => lookup(sku), () => `${sku}: cached answer`);
}

async function main() {
  console.log('3 requests at once (concurrentThreshold 2):');
  for (const answer of await Promise.all(['a', 'b', 'c'].map(handle))) console.log(`  ${answer}`);

  console.log('4 more, one after another (visitThreshold 5 per 10 s):');
  for (const sku of ['d', 'e', 'f', 'g']) console.log(`  ${await handle(sku)}`);

  const stats = inventory.stats();
  console.log(`stats: ${stats.visit} visits, ${stats.downgrade} downgraded, ${stats.concurrent} in flight`);

  // The explicit form, for code that cannot be wrapped in a function.
  const entry = client.enter('inventory.lookup');
  try {
    console.log(entry.downgraded ? `explicit entry downgraded: ${entry.reason}` : 'explicit entry passed');
  } finally {
    entry.exit();
  }
}

main();
