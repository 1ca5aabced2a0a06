'use strict';
const { version } = require('./package.json');
function pad(s, n, ch) {
  s = String(s);
  ch = ch === undefined ? ' ' : String(ch);
  while (s.length < n) s = ch + s;
  return s;
}
module.exports = pad;
module.exports.version = version;
