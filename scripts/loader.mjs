#!/usr/bin/env node
// meshcap's start-up loader: runs the CommonJS bundle next to it through V8's code cache, so a pod's start
// path skips parsing and compiling most of meshcap. A cache made by another Node/V8 is rejected by V8 and the
// bundle compiles as usual; nothing is written at run time unless MESHCAP_CODE_CACHE=write (the build does).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

const file = fileURLToPath(new URL('./lib/__NAME__.cjs', import.meta.url));
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
const module = { exports: {} };
script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
