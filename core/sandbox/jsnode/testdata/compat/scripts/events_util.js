const EventEmitter = require('events');
const { once } = require('events');
const util = require('util');
class Bus extends EventEmitter {}
const bus = new Bus();
bus.on('msg', (a, b) => console.log('msg', a, b));
bus.once('msg', () => console.log('once'));
bus.emit('msg', 1, 2); bus.emit('msg', 3, 4);
console.log(bus.listenerCount('msg'), bus.eventNames());
try { bus.emit('error', new Error('bad')); } catch (e) { console.log('thrown', e.message); }
(async () => {
  setTimeout(() => bus.emit('ready', 'ok'), 5);
  const [v] = await once(bus, 'ready');
  console.log('once ->', v);
  const sleep = util.promisify((ms, cb) => setTimeout(() => cb(null, ms), ms));
  console.log('slept', await sleep(3));
  const readFile = util.promisify(require('fs').readFile);
  console.log((await readFile('data/words.txt', 'utf8')).length);
  console.log(util.isDeepStrictEqual({ a: [1] }, { a: [1] }), util.types.isPromise(Promise.resolve()));
  function Old() {} util.inherits(Old, EventEmitter); console.log(new Old() instanceof EventEmitter);
})();
