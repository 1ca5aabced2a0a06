const path = require('path');
const cases = [
  path.join('/a/b', '../c', './d'), path.join('a', '', 'b/'), path.join(),
  path.resolve('/x', 'y', '..', 'z'), path.normalize('/a//b/../c/.'), path.normalize('./x/../../y'),
  path.dirname('/a/b/c.txt'), path.dirname('c.txt'), path.basename('/a/b/c.txt'), path.basename('/a/b/c.txt', '.txt'),
  path.extname('x.tar.gz'), path.extname('.bashrc'), path.relative('/a/b/c', '/a/d'), path.isAbsolute('a'),
  path.parse('/home/u/file.txt'), path.format({ dir: '/tmp', name: 'f', ext: '.js' }), path.sep, path.delimiter,
  path.relative(process.cwd(), path.resolve('data/users.json')),
];
for (const c of cases) console.log(c);
