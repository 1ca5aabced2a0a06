exports.upper = (s) => s.toUpperCase();
exports.lower = (s) => s.toLowerCase();
