const fs = require('fs');
for (const f of [() => fs.readFileSync('missing.txt'), () => fs.mkdirSync('data'), () => fs.rmdirSync('data'),
  () => fs.readdirSync('data/words.txt'), () => fs.unlinkSync('nope/x'), () => fs.renameSync('no1', 'no2')]) {
  try { f(); console.log('no error'); } catch (e) { console.log(e.code, e.syscall, e.errno, e.message); }
}
fs.readFile('missing.txt', 'utf8', (err, data) => {
  console.log('cb', err.code, data);
  fs.promises.stat('missing.txt').catch((e) => console.log('promise', e.code, e instanceof Error));
});
console.log(fs.existsSync('data'), fs.existsSync('nope'), fs.statSync('nope', { throwIfNoEntry: false }));
