class Point { constructor(x, y) { this.x = x; this.y = y; } }
const circ = { name: 'c' }; circ.self = circ;
const values = [
  'str', 42, -0, 1.5, true, null, undefined, 10n, Symbol('s'),
  [1, 'two', [3, [4, [5, [6]]]]], { a: { b: { c: { d: 1 } } } }, { 'needs-quote': 1, ok: "it's", q: 'say "hi"' },
  new Map([['k', 1], ['j', { z: 2 }]]), new Set([1, 'a']), new Point(1, 2), Object.create(null),
  [undefined, null, , 3], function named() {}, () => {}, class Foo {}, new Date(0), /re+/gi, circ,
  Array.from({ length: 120 }, (_, i) => i), 'x'.repeat(30).split(''), { long1: 'aaaaaaaaaaaaaaaaaaaa', long2: 'bbbbbbbbbbbbbbbbbbbb', long3: 'cccccccccccccccccccc', long4: 'dddd' },
  [{ a: 1, b: 2 }, { a: 3, b: 4 }], new Uint8Array([1, 2, 3]), [[]], {}, [], Promise.resolve(5), new Error('e').message,
  { f() {}, g: async () => {} }, [1.25, 100, -3, 4000, 5, 6, 7, 8],
];
for (const v of values) console.log(v);
console.log('%s is %d years and %i, %j %O', 'Ada', 36.5, 36.5, { a: 1 }, [1]);
console.log('%% literal', 'extra', 5, { x: [1, 2] });
console.error('to stderr');
console.log(require('util').inspect({ deep: { deeper: { deepest: { bottom: 1 } } } }, { depth: 0 }));
console.log(require('util').format('a', 'b', 3), String(Symbol('q')));
