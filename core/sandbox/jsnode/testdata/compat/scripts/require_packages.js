// A CommonJS package tree under node_modules: main, exports with
// conditions and subpaths, a nested node_modules, JSON, caching.
const pad = require('tiny-pad');
const { shout, loadedFrom } = require('@acme/strings');
const { lower } = require('@acme/strings/case');
const pkg = require('@acme/strings/package.json');
const c1 = require('../lib/counter');
const c2 = require('../lib/counter.js');
console.log(pad(7, 3, 0), pad.version, shout('hi'), loadedFrom, lower('ABC'), pkg.version);
c1.inc(); c2.inc();
console.log(c1 === c2, c1.value);
try { require('@acme/strings/lib/case.js'); } catch (e) { console.log('blocked by exports:', e.code); }
try { require('does-not-exist'); } catch (e) { console.log(e.code); }
console.log(typeof require.resolve, require.resolve('tiny-pad').endsWith('nm/tiny-pad/pad.js') || require.resolve('tiny-pad').endsWith('node_modules/tiny-pad/pad.js'));
console.log(require.main === module, typeof __filename, typeof __dirname);
