// process.exitCode, 'exit' listeners, process.exit in the middle.
process.on('exit', (c) => { console.log('exit event', c); });
console.log('before');
process.exitCode = 3;
setTimeout(() => {
  console.log('timer');
  process.exit(7);
  console.log('never printed');
}, 5);
