// The Durable Object's SQL storage as the engine's database: the object
// that the Workers build of the engine (wasm/host_js.go, Go's
// core/store/driver_host.go) calls for each statement and transaction.
// Values cross as bytes, one call per statement (see the wire format in
// driver_host.go): a value is a tag byte (0 null, 1 int64, 2 float64,
// 3 text, 4 blob) and its bytes, little-endian; rows are the column
// count, the column names, the row count and the values row by row.
// A statement's text crosses once (prepare numbers it); its arguments
// and rows cross through two buffers the object keeps (args, out), so a
// statement is one call with numbers in and a number out: every string
// and every JavaScript value that Go takes or makes costs it a decode or
// an allocation with a finalizer.

/** The part of a Durable Object's ctx.storage the engine uses. */
export interface CloudflareStorage {
  readonly sql: SqlStorage;
  transactionSync<T>(callback: () => T): T;
}

/** A Durable Object's ctx.storage.sql. */
export interface SqlStorage {
  exec<T = Record<string, unknown>>(query: string, ...bindings: unknown[]): SqlStorageCursor<T>;
  readonly databaseSize: number;
}

/** A cursor of SqlStorage.exec. */
export interface SqlStorageCursor<T = Record<string, unknown>> {
  toArray(): T[];
  one(): T;
  raw(): IterableIterator<unknown[]>;
  readonly columnNames: string[];
  readonly rowsRead: number;
  readonly rowsWritten: number;
}

/** What the engine's attach(path, host) takes (store.AttachHost). */
export interface SqlHost {
  /** Numbers a statement's text for exec. */
  prepare(query: string): number;
  /**
   * Runs a statement (its number, or its text) with its arguments (the
   * first n bytes of args, or an array of their own) and writes its rows
   * into out: answers their length, or an error message.
   */
  exec(query: number | string, args: number | Uint8Array): number | string;
  /** The buffer of arguments, and its replacement by one of at least n bytes. */
  readonly args: Uint8Array;
  grow(n: number): void;
  /** The buffer of rows, and its replacement by a small one after large rows. */
  readonly out: Uint8Array;
  shrink(): void;
  tx(body: () => boolean): string | null;
  /**
   * The call transaction (see inCall): begin answers 1 when the engine
   * takes it over, 0 when there is none to take (the engine uses tx), -1
   * when the call was rolled back (the engine refuses); end(commit)
   * answers 0, or -1 when it was not open.
   */
  begin(): number;
  end(commit: boolean): number;
  /**
   * inCall runs one engine call inside one transaction, which the call's
   * first write transaction takes over instead of opening its own (a
   * transactionSync whose callback calls back into Go: the costliest part
   * of a small write). If that write rolls back, the storage cannot undo
   * it at once: every later statement of the call is refused, and the
   * whole call is rolled back when it returns. If the call met no refusal
   * (it returned after the failed write, as calls do), its answer stands:
   * the storage ends as a rollback at once would have left it. Otherwise
   * the call runs again on its own, with transactions of its own.
   */
  inCall<T>(fn: () => T): T;
}

const ROLLBACK = Symbol("rollback");
const NONE = 0;
const FREE = 1;
const OPEN = 2;
const USED = 3;
const ABORTED = 4;
const ABORTED_MESSAGE = "this call's transaction was rolled back (it runs again)";
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();
const SMALL = 4096;

/** sqlHost makes storage the engine's database. */
export function sqlHost(storage: CloudflareStorage): SqlHost {
  const queries: string[] = [];
  let args = new Uint8Array(SMALL);
  const w = new Writer();
  // The call transaction: NONE outside inCall; FREE until the engine takes
  // it over, then OPEN until its COMMIT, then USED; ABORTED after its
  // ROLLBACK (every statement refused until the call is run again).
  let call = NONE;
  // refused: a statement or transaction was refused since the ROLLBACK.
  let refused = false;
  return {
    prepare(query) {
      return queries.push(query) - 1;
    },
    exec(query, a) {
      if (call === ABORTED) {
        refused = true;
        return ABORTED_MESSAGE;
      }
      try {
        const q = typeof query === "number" ? queries[query] : query;
        const b = typeof a === "number" ? args.subarray(0, a) : a;
        const cur = b.byteLength > 0 ? storage.sql.exec(q, ...decodeArgs(b)) : storage.sql.exec(q);
        w.n = 0;
        encodeRows(w, cur.columnNames, cur.raw());
        return w.n;
      } catch (e) {
        return message(e);
      }
    },
    get args() {
      return args;
    },
    grow(n) {
      let size = args.byteLength * 2;
      while (size < n) size *= 2;
      args = new Uint8Array(size);
    },
    get out() {
      return w.buf;
    },
    shrink() {
      w.reset();
    },
    begin() {
      if (call === ABORTED) {
        refused = true;
        return -1;
      }
      if (call !== FREE) return 0;
      call = OPEN;
      return 1;
    },
    end(commit) {
      if (call !== OPEN) return -1;
      call = commit ? USED : ABORTED;
      return 0;
    },
    inCall(fn) {
      // Nested (a call made while one runs): inside the running one.
      if (call !== NONE) return fn();
      let r: ReturnType<typeof fn> | undefined;
      let again = false;
      try {
        storage.transactionSync(() => {
          call = FREE;
          refused = false;
          r = fn();
          // A write transaction still open when the call returns could not
          // commit as a whole: undo the call and run it again.
          if (call === ABORTED || call === OPEN) {
            again = call === OPEN || refused;
            throw ROLLBACK;
          }
        });
      } catch (e) {
        if (e !== ROLLBACK) throw e;
      } finally {
        call = NONE;
      }
      return again ? fn() : (r as ReturnType<typeof fn>);
    },
    tx(body) {
      try {
        storage.transactionSync(() => {
          // false: the engine rolled back (the throw undoes the writes).
          if (!body()) throw ROLLBACK;
        });
        return null;
      } catch (e) {
        return e === ROLLBACK ? null : message(e);
      }
    },
  };
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function decodeArgs(b: Uint8Array): unknown[] {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: unknown[] = [];
  let p = 0;
  while (p < b.byteLength) {
    const tag = b[p++];
    switch (tag) {
      case 0:
        out.push(null);
        break;
      case 1: {
        // Numbers where exact (read as two halves: no BigInt made);
        // larger integers as BigInt.
        const lo = v.getUint32(p, true);
        const hi = v.getInt32(p + 4, true);
        out.push(hi >= -0x200000 && hi < 0x200000 ? hi * 0x100000000 + lo : v.getBigInt64(p, true));
        p += 8;
        break;
      }
      case 2:
        out.push(v.getFloat64(p, true));
        p += 8;
        break;
      case 3:
      case 4: {
        const n = v.getUint32(p, true);
        p += 4;
        const s = b.subarray(p, p + n);
        p += n;
        // Blobs bind as ArrayBuffer (a copy: the engine reuses its memory).
        out.push(tag === 3 ? fromUtf8.decode(s) : s.slice().buffer);
        break;
      }
      default:
        throw new Error(`agentfs: bad argument tag ${tag} from the engine`);
    }
  }
  return out;
}

/** A growing buffer for encodeRows, kept from one statement to the next. */
class Writer {
  buf = new Uint8Array(SMALL);
  view = new DataView(this.buf.buffer);
  n = 0;

  reset(): void {
    this.buf = new Uint8Array(SMALL);
    this.view = new DataView(this.buf.buffer);
    this.n = 0;
  }

  need(k: number): void {
    if (this.n + k <= this.buf.byteLength) return;
    let size = this.buf.byteLength * 2;
    while (size < this.n + k) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf.subarray(0, this.n));
    this.buf = b;
    this.view = new DataView(b.buffer);
  }
  u8(x: number): void {
    this.need(1);
    this.buf[this.n++] = x;
  }
  u32(x: number): void {
    this.need(4);
    this.view.setUint32(this.n, x, true);
    this.n += 4;
  }
  bytes(b: Uint8Array): void {
    this.u32(b.byteLength);
    this.need(b.byteLength);
    this.buf.set(b, this.n);
    this.n += b.byteLength;
  }
  text(s: string): void {
    // At most 3 bytes per UTF-16 unit.
    this.need(4 + s.length * 3);
    const r = utf8.encodeInto(s, this.buf.subarray(this.n + 4));
    this.view.setUint32(this.n, r.written, true);
    this.n += 4 + r.written;
  }
}

function encodeRows(w: Writer, cols: string[], rows: IterableIterator<unknown[]>): void {
  w.u32(cols.length);
  for (const c of cols) w.text(c);
  const countAt = w.n;
  w.u32(0);
  let count = 0;
  for (const row of rows) {
    count++;
    for (const x of row) {
      if (x === null || x === undefined) w.u8(0);
      else if (typeof x === "number") {
        w.need(9);
        if (Number.isSafeInteger(x)) {
          // Two halves, no BigInt made: hi is x's floor division by 2^32.
          const hi = Math.floor(x / 0x100000000);
          w.buf[w.n] = 1;
          w.view.setUint32(w.n + 1, x - hi * 0x100000000, true);
          w.view.setInt32(w.n + 5, hi, true);
        } else {
          w.buf[w.n] = 2;
          w.view.setFloat64(w.n + 1, x, true);
        }
        w.n += 9;
      } else if (typeof x === "bigint") {
        w.need(9);
        w.buf[w.n] = 1;
        w.view.setBigInt64(w.n + 1, x, true);
        w.n += 9;
      } else if (typeof x === "string") {
        w.u8(3);
        w.text(x);
      } else if (x instanceof ArrayBuffer) {
        w.u8(4);
        w.bytes(new Uint8Array(x));
      } else if (ArrayBuffer.isView(x)) {
        w.u8(4);
        w.bytes(new Uint8Array(x.buffer, x.byteOffset, x.byteLength));
      } else {
        w.u8(3);
        w.text(String(x));
      }
    }
  }
  w.view.setUint32(countAt, count, true);
}
