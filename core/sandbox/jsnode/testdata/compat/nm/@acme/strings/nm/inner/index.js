module.exports = { bang: '!' };
