console.log(process.argv.slice(2), process.argv.length);
console.log(process.env.GREETING, typeof process.env.PATH);
console.log(typeof process.cwd(), process.platform, typeof process.hrtime.bigint(), typeof performance.now());
process.chdir('data');
console.log(require('fs').readFileSync('words.txt', 'utf8').split('\n')[0], require('path').basename(process.cwd()));
