// Event loop ordering: sync code, nextTick, promise jobs, timers by
// delay, intervals, immediates, clearTimeout.
const log = [];
setTimeout(() => log.push('t30'), 30);
setTimeout(() => log.push('t10'), 10);
const cancelled = setTimeout(() => log.push('never'), 15);
setTimeout(() => log.push('t20'), 20);
clearTimeout(cancelled);
Promise.resolve().then(() => log.push('p1')).then(() => log.push('p2'));
process.nextTick(() => log.push('tick1'));
queueMicrotask(() => log.push('micro'));
process.nextTick(() => { log.push('tick2'); Promise.resolve().then(() => log.push('p-from-tick')); });
// Each step starts from the previous one's callback, so that a loaded
// machine (timers firing late together) keeps the same order.
setTimeout(() => {
  setImmediate(() => {
    log.push('imm-in-timer');
    let n = 0;
    const iv = setInterval(() => { log.push('iv' + ++n); if (n === 3) clearInterval(iv); }, 5);
  });
  process.nextTick(() => log.push('tick-in-timer'));
}, 50);
log.push('sync');
process.on('exit', (code) => console.log(log.join(' '), code));
