console.log('start');
function f() { throw new TypeError('boom'); }
setTimeout(f, 1);
