// Top-level await in the entry module.
import { readFile, writeFile, readdir } from 'node:fs/promises';
const names = (await readdir('data/items')).sort();
const all = [];
for (const n of names) all.push(JSON.parse(await readFile(`data/items/${n}`, 'utf8')));
await writeFile('merged.json', JSON.stringify(all));
console.log(names.length, (await readFile('merged.json', 'utf8')).length);
const wait = (ms, v) => new Promise((r) => setTimeout(() => r(v), ms));
console.log(await wait(5, 'waited'));
