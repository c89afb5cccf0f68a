'use strict';
// How many threads of this process carry a name (Linux: /proc/self/task),
// so tests can check that a native thread was started and joined.
const fs = require('node:fs');

function threadsNamed(name) {
  let count = 0;
  for (const task of fs.readdirSync('/proc/self/task')) {
    try {
      if (fs.readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim() === name) count++;
    } catch {
      // The thread ended while listed.
    }
  }
  return count;
}

module.exports = { threadsNamed };
