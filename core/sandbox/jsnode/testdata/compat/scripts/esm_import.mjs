// ES modules: relative imports, default and named, a package that is
// an ES module, node: builtins, import.meta.
import math, { add, mul } from '../lib/math.mjs';
import * as m from '../lib/math.mjs';
import twice, { greet } from 'esm-only';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const counter = require('../lib/counter.js');
console.log(add(2, 3), mul(4, 5), math.name, Object.keys(m).sort());
console.log(twice(21), greet('esm'));
console.log(readFileSync('data/words.txt', 'utf8').split('\n').filter(Boolean).length);
console.log(path.basename(fileURLToPath(import.meta.url)), counter.inc());
const dyn = await import('../lib/math.mjs');
console.log(dyn.add(1, 1));
