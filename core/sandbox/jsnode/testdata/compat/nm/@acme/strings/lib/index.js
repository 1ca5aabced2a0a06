const inner = require('inner');
const { upper } = require('./case');
exports.shout = (s) => upper(s) + inner.bang;
exports.loadedFrom = 'index';
