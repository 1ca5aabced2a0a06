const { execSync, exec, spawn, spawnSync, execFileSync } = require('child_process');
console.log(execSync('echo hello from sh').toString().trim());
console.log(execSync('wc -l < data/words.txt', { encoding: 'utf8' }).trim());
console.log(execFileSync('cat', ['data/words.txt'], { encoding: 'utf8' }).split('\n')[1]);
const r = spawnSync('sh', ['-c', 'echo out; echo err >&2; exit 4'], { encoding: 'utf8' });
console.log(r.status, JSON.stringify(r.stdout), JSON.stringify(r.stderr));
try { execSync('exit 3', { stdio: 'pipe' }); } catch (e) { console.log('status', e.status); }
console.log(execSync('cat', { input: 'piped input', encoding: 'utf8' }));
exec('ls data | sort', (err, stdout) => {
  console.log('exec', err, stdout.split('\n').filter(Boolean).join(','));
  const child = spawn('sort', ['-r']);
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.on('close', (code) => console.log('spawn', code, JSON.stringify(out)));
  child.stdin.write('a\nc\n');
  child.stdin.end('b\n');
});
