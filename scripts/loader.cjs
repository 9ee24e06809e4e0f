#!/usr/bin/env node
'use strict';
// meshcap's start-up loader: runs the CommonJS bundle next to it through V8's code cache, so a pod's start
// path skips parsing and compiling most of meshcap. A cache made by another Node/V8 is rejected by V8 and the
// bundle compiles as usual; nothing is written at run time unless MESHCAP_CODE_CACHE=write (the build does).
// CommonJS itself: an ES module entry starts Node's ESM loader first (+2.8 MiB peak RSS, ~9 ms measured).
const { readFileSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { dirname, join } = require('node:path');
const { Script } = require('node:vm');

const file = join(__dirname, 'lib', '__NAME__.cjs');
const cacheFile = `${file}.cache`;
let cachedData;
try {
  cachedData = readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}
const source = `(function (exports, require, module, __filename, __dirname) {${readFileSync(file, 'utf8')}\n})`;
const script = new Script(source, { filename: file, ...(cachedData ? { cachedData } : {}) });
if (process.env.MESHCAP_CODE_CACHE === 'write') {
  process.once('beforeExit', () => writeFileSync(cacheFile, script.createCachedData()));
}
const bundle = { exports: {} };
script.runInThisContext()(bundle.exports, createRequire(file), bundle, file, dirname(file));
