let n = 0;
module.exports = { inc: () => ++n, get value() { return n; } };
