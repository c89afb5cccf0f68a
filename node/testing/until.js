'use strict';
// Waiting in tests for what another thread or process does.

/** Polls `check` every 20 ms until it returns a truthy value (returned) or `ms` pass (throws). */
async function until(check, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

module.exports = { until };
