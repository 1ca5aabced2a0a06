// The other side of the encryption interop test (core/crypt_turso_test.go):
// Turso's own engine, @tursodatabase/database, writes and reads encrypted
// databases with a cipher and hex key.
//   node turso.mjs write PATH CIPHER HEXKEY TEXT   -> table t(x) gets TEXT
//   node turso.mjs read PATH CIPHER HEXKEY         -> prints t's rows (JSON)
import { Database } from "@tursodatabase/database/compat";

const [cmd, path, cipher, hexkey, text] = process.argv.slice(2);
const db = new Database(path, {
  encryption: { cipher, hexkey },
  experimental: ["encryption"],
});
if (cmd === "write") {
  db.exec("CREATE TABLE IF NOT EXISTS t (x TEXT)");
  db.prepare("INSERT INTO t (x) VALUES (?)").run(text);
  // Turso's engine keeps pages in the -wal until a checkpoint; leave the
  // log in place on purpose when asked, to test that we adopt it.
  if (!process.env.KEEP_WAL) db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
} else if (cmd === "read") {
  const rows = db.prepare("SELECT x FROM t ORDER BY rowid").all();
  console.log(JSON.stringify(rows.map((r) => r.x)));
  db.close();
} else {
  console.error("usage: turso.mjs write|read PATH CIPHER HEXKEY [TEXT]");
  process.exit(2);
}
