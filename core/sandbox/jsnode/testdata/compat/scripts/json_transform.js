// Read a JSON file, transform it, write the result, read it back.
const fs = require('fs');
const path = require('path');
const users = JSON.parse(fs.readFileSync(path.join('data', 'users.json'), 'utf8'));
const byTeam = {};
for (const u of users.filter((u) => u.active)) {
  (byTeam[u.team] ||= { members: [], commits: 0 });
  byTeam[u.team].members.push(u.name);
  byTeam[u.team].commits += u.commits;
}
fs.mkdirSync('out/reports', { recursive: true });
fs.writeFileSync('out/reports/teams.json', JSON.stringify(byTeam, null, 2) + '\n');
const back = JSON.parse(fs.readFileSync('out/reports/teams.json', 'utf8'));
console.log(back);
console.log(Object.keys(back).sort().join(','), fs.statSync('out/reports/teams.json').size);
const items = fs.readdirSync('data/items').sort().map((f) => require('../data/items/' + f));
console.log(items.map((i) => i.n * 10), items.flatMap((i) => i.tags));
fs.appendFileSync('out/log.txt', 'one\n');
fs.appendFileSync('out/log.txt', 'two\n');
process.stdout.write(fs.readFileSync('out/log.txt', 'utf8'));
