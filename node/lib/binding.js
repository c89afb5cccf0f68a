'use strict';
// Loads the native addon built for this platform. `napi build --platform`
// names it sds-native.<platform>-<arch>[-<abi>].node next to package.json;
// SDS_NATIVE_ADDON points at another file (a debug build, say).
const path = require('node:path');

function libcSuffix() {
  const report = process.report && process.report.getReport();
  const header = report && (typeof report === 'string' ? JSON.parse(report) : report).header;
  return header && header.glibcVersionRuntime ? 'gnu' : 'musl';
}

function platformTag() {
  const { platform, arch } = process;
  if (platform === 'linux') return `linux-${arch}-${libcSuffix()}`;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

function addonPath() {
  return process.env.SDS_NATIVE_ADDON ||
    path.join(__dirname, '..', `sds-native.${platformTag()}.node`);
}

function load() {
  const file = addonPath();
  try {
    return require(file).native;
  } catch (cause) {
    const error = new Error(
      `sds-native: cannot load the native addon ${file} (${cause.message}). ` +
      'Reinstall the package on this platform, or build it from the source ' +
      'tree with `npm run build` (needs Rust).',
    );
    error.cause = cause;
    throw error;
  }
}

module.exports = { load, addonPath };
