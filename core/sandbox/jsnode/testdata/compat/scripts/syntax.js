// Language features agents' scripts use.
class Animal {
  #secret = 'hidden';
  static count = 0;
  constructor(name) { this.name = name; Animal.count++; }
  speak() { return `${this.name} makes a sound`; }
  get secret() { return this.#secret; }
}
class Dog extends Animal { speak() { return `${super.speak()} (woof)`; } }
const d = new Dog('Rex');
console.log(d.speak(), d.secret, Animal.count);
const { a, b: { c = 5 } = {}, ...rest } = { a: 1, b: {}, x: 2, y: 3 };
console.log(a, c, rest, [...'abc'], { ...rest, z: 1 });
const o = { p: null };
console.log(o?.p?.q, o.p ?? 'default', 2 ** 10, [1, [2, [3]]].flat(2));
function* gen() { yield 1; yield* [2, 3]; }
console.log([...gen()], Array.from(new Map([[1, 2]]).entries()));
async function main() {
  const results = await Promise.all([1, 2, 3].map(async (x) => x * 2));
  const settled = await Promise.allSettled([Promise.reject(new Error('x')), 1]);
  console.log(results, settled.map((s) => s.status));
  for await (const v of (async function* () { yield 'ag1'; yield 'ag2'; })()) console.log(v);
  label: for (const i of [1, 2]) { for (const j of [1, 2]) { if (j === 2) continue label; console.log(i, j); } }
  try { JSON.parse('{bad'); } catch ({ name }) { console.log(name); }
  console.log([3, 1, 2].sort((x, y) => x - y), 'a-b-c'.replaceAll('-', '+'), Object.fromEntries([['k', 'v']]));
  console.log(String.raw`\n`, `multi
line`, typeof globalThis, [1, 2, 3].at(-1), structuredClone({ q: [1] }));
}
main();
