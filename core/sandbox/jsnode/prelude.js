// The JavaScript half of the sandbox's node: Node's modules built over
// the native functions of the Go half (N). It runs once per script, as a
// function of (N, globalThis), and returns the builtin modules.
(function (N, G) {
  'use strict';
  const builtins = {};

  // One allocation larger than the run's memory budget is refused as
  // Node refuses one larger than its heap (a RangeError the script may
  // catch): the interpreter would otherwise allocate it whole before the
  // sandbox's heap guard could see it.
  const checkAlloc = (bytes, what) => {
    if (bytes > N.maxAlloc()) throw new RangeError(what || 'Array buffer allocation failed');
  };
  // A wrapping constructor (goja's instanceof rejects a Proxy of one):
  // the same prototype object, so instanceof, subclassing and species
  // behave as with the original.
  const origConstruct = Reflect.construct;
  const guardCtor = (C, per) => {
    const W = { [C.name]: function (...args) {
      if (new.target === undefined) throw new TypeError(`Constructor ${C.name} requires 'new'`);
      if (typeof args[0] === 'number') checkAlloc(args[0] * per);
      return origConstruct(C, args, new.target === W ? C : new.target);
    } }[C.name];
    Object.setPrototypeOf(W, Object.getPrototypeOf(C));
    for (const k of Reflect.ownKeys(C)) {
      if (k === 'prototype' || k === 'length' || k === 'name') continue;
      Object.defineProperty(W, k, Object.getOwnPropertyDescriptor(C, k));
    }
    Object.defineProperty(W, 'prototype', { value: C.prototype });
    Object.defineProperty(C.prototype, 'constructor', { value: W, writable: true, configurable: true });
    return W;
  };
  G.ArrayBuffer = guardCtor(ArrayBuffer, 1);
  if (typeof SharedArrayBuffer === 'function') G.SharedArrayBuffer = guardCtor(SharedArrayBuffer, 1);
  for (const name of ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array']) {
    if (typeof G[name] === 'function') G[name] = guardCtor(G[name], G[name].BYTES_PER_ELEMENT);
  }
  // goja runs Array methods as Go loops that its interrupt does not
  // reach: over a sparse array of length 1e9 (cheap to make) "fill" or
  // "join" would run, and grow, past every limit. An array-like longer
  // than could be dense within the budget is refused before the loop.
  const maxLen = () => Math.max(N.maxAlloc() / 16, 1 << 16);
  const lenGuard = (obj, name) => {
    const orig = obj[name];
    if (typeof orig !== 'function') return;
    Object.defineProperty(obj, name, {
      value: { [name](...a) { if (this != null && this.length > maxLen()) throw new RangeError('Invalid array length'); return orig.apply(this, a); } }[name],
      writable: true, configurable: true,
    });
  };
  for (const m of ['fill', 'join', 'toString', 'toLocaleString', 'map', 'forEach', 'filter', 'reduce', 'reduceRight', 'indexOf',
    'lastIndexOf', 'includes', 'reverse', 'sort', 'slice', 'splice', 'copyWithin', 'every', 'some', 'find', 'findIndex', 'findLast',
    'findLastIndex', 'flat', 'flatMap', 'concat', 'shift', 'unshift', 'toReversed', 'toSorted', 'toSpliced', 'with']) lenGuard(Array.prototype, m);
  // A string becomes one value per character (about 48 bytes each).
  const strLenGuard = (str) => { if (str.length * 48 > N.maxAlloc()) throw new RangeError('Invalid array length'); };
  const arrFrom = Array.from;
  Array.from = function from(src, ...a) {
    if (typeof src === 'string') strLenGuard(src);
    else if (src != null && src.length > maxLen()) throw new RangeError('Invalid array length');
    return arrFrom.call(this, src, ...a);
  };
  const strSplit = String.prototype.split;
  Object.defineProperty(String.prototype, 'split', {
    value: function split(sep, limit) {
      if (sep === '' && limit === undefined) strLenGuard(String(this));
      return strSplit.call(this, sep, limit);
    }, writable: true, configurable: true,
  });
  const fnApply = Function.prototype.apply;
  const guardArgs = (args) => { if (args != null && args.length > maxLen()) throw new RangeError('Maximum call stack size exceeded'); };
  Object.defineProperty(Function.prototype, 'apply', {
    value: function apply(self, args) { guardArgs(args); return fnApply.call(this, self, args); }, writable: true, configurable: true,
  });
  const rApply = Reflect.apply, rConstruct = Reflect.construct;
  Reflect.apply = (f, self, args) => { guardArgs(args); return rApply(f, self, args); };
  Reflect.construct = (f, args, nt) => { guardArgs(args); return nt === undefined ? rConstruct(f, args) : rConstruct(f, args, nt); };
  const strGuard = (name, size) => {
    const orig = String.prototype[name];
    Object.defineProperty(String.prototype, name, {
      value: { [name](...a) { checkAlloc(size(String(this), a) * 2, 'Invalid string length'); return orig.apply(this, a); } }[name],
      writable: true, configurable: true,
    });
  };
  strGuard('repeat', (s, a) => s.length * (Number(a[0]) || 0));
  strGuard('padStart', (s, a) => Number(a[0]) || 0);
  strGuard('padEnd', (s, a) => Number(a[0]) || 0);

  // ---------------------------------------------------------------- util
  const kObject = 0, kArray = 1;
  const idRe = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
  const strEsc = { '\n': '\\n', '\t': '\\t', '\r': '\\r', '\b': '\\b', '\f': '\\f', '\v': '\\v', '\\': '\\\\' };

  function quote(s) {
    let q = "'";
    if (s.includes("'")) {
      if (!s.includes('"')) q = '"';
      else if (!s.includes('`') && !s.includes('${')) q = '`';
    }
    let out = '';
    for (const ch of s) {
      const c = ch.codePointAt(0);
      if (ch === q) out += '\\' + ch;
      else if (strEsc[ch]) out += strEsc[ch];
      else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0').toUpperCase();
      else out += ch;
    }
    return q + out + q;
  }

  function fnName(f) {
    const src = Function.prototype.toString.call(f);
    const cls = src.startsWith('class');
    let base = cls ? '[class ' : '[Function';
    if (cls) {
      base += (f.name || '(anonymous)');
      const sup = Object.getPrototypeOf(f);
      if (sup && sup.name) base += ' extends ' + sup.name;
      return base + ']';
    }
    const ctor = Object.getPrototypeOf(f) && Object.getPrototypeOf(f).constructor;
    if (ctor && ctor.name === 'AsyncFunction') base = '[AsyncFunction';
    else if (ctor && ctor.name === 'GeneratorFunction') base = '[GeneratorFunction';
    else if (ctor && ctor.name === 'AsyncGeneratorFunction') base = '[AsyncGeneratorFunction';
    return base + (f.name ? ': ' + f.name : ' (anonymous)') + ']';
  }

  function getCtorName(o) {
    let p = o;
    while (p) {
      const d = Object.getOwnPropertyDescriptor(p, 'constructor');
      if (d && typeof d.value === 'function' && d.value.name !== '') return d.value.name;
      p = Object.getPrototypeOf(p);
    }
    return null;
  }

  function isBelowBreakLength(ctx, output, start, base) {
    let total = output.length + start;
    if (total + output.length > ctx.breakLength) return false;
    for (let i = 0; i < output.length; i++) {
      total += output[i].length;
      if (total > ctx.breakLength) return false;
    }
    return base === '' || !base.includes('\n');
  }

  function groupArrayElements(ctx, output, value) {
    let totalLength = 0, maxLength = 0, i = 0;
    let outputLength = output.length;
    if (ctx.extra) outputLength--;
    const separatorSpace = 2;
    const dataLen = new Array(outputLength);
    for (; i < outputLength; i++) {
      const len = output[i].length;
      dataLen[i] = len;
      totalLength += len + separatorSpace;
      if (maxLength < len) maxLength = len;
    }
    const actualMax = maxLength + separatorSpace;
    if (actualMax * 3 + ctx.indentationLvl < ctx.breakLength &&
        (totalLength / actualMax > 5 || maxLength <= 6)) {
      const averageBias = Math.sqrt(actualMax - totalLength / output.length);
      const biasedMax = Math.max(actualMax - 3 - averageBias, 1);
      const columns = Math.min(
        Math.round(Math.sqrt(2.5 * biasedMax * outputLength) / biasedMax),
        Math.floor((ctx.breakLength - ctx.indentationLvl) / actualMax),
        3 * 4, 15);
      if (columns <= 1) return output;
      const tmp = [], maxLineLength = [];
      for (let i = 0; i < columns; i++) {
        let lineLength = 0;
        for (let j = i; j < output.length; j += columns) if (dataLen[j] > lineLength) lineLength = dataLen[j];
        maxLineLength.push(lineLength + separatorSpace);
      }
      let padStart = true;
      if (value !== undefined) {
        for (let i = 0; i < output.length; i++) {
          if (typeof value[i] !== 'number' && typeof value[i] !== 'bigint') { padStart = false; break; }
        }
      }
      for (let i = 0; i < outputLength; i += columns) {
        const max = Math.min(i + columns, outputLength);
        let str = '';
        let j = i;
        for (; j < max - 1; j++) {
          const s = output[j] + ', ';
          str += padStart ? s.padStart(maxLineLength[j - i], ' ') : s.padEnd(maxLineLength[j - i], ' ');
        }
        if (padStart) str += output[j].padStart(maxLineLength[j - i] - separatorSpace, ' ');
        else str += output[j];
        tmp.push(str);
      }
      if (ctx.extra) tmp.push(output[outputLength]);
      output = tmp;
    }
    return output;
  }

  function reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value) {
    const entries = output.length;
    if (extrasType === kArray && entries > 6) output = groupArrayElements(ctx, output, value);
    if (ctx.currentDepth - recurseTimes < 3 && entries === output.length) {
      const start = output.length + ctx.indentationLvl + braces[0].length + base.length + 10;
      if (isBelowBreakLength(ctx, output, start, base)) {
        const joined = output.join(', ');
        if (!joined.includes('\n')) return (base ? base + ' ' : '') + braces[0] + ' ' + joined + ' ' + braces[1];
      }
    }
    const ind = '\n' + ' '.repeat(ctx.indentationLvl);
    return (base ? base + ' ' : '') + braces[0] + ind + '  ' + output.join(',' + ind + '  ') + ind + braces[1];
  }

  function formatKey(k) {
    if (typeof k === 'symbol') return '[' + k.toString() + ']';
    return idRe.test(k) ? k : quote(k);
  }

  function formatPrimitive(v, ctx) {
    switch (typeof v) {
      case 'string': {
        let s = v, trailer = '';
        if (s.length > 10000) { trailer = `... ${s.length - 10000} more characters`; s = s.slice(0, 10000); }
        return quote(s) + trailer;
      }
      case 'number': return Object.is(v, -0) ? '-0' : String(v);
      case 'bigint': return String(v) + 'n';
      case 'boolean': return String(v);
      case 'undefined': return 'undefined';
      case 'symbol': return v.toString();
    }
    return String(v);
  }

  function formatError(e) {
    let stack = e.stack ? String(e.stack) : '';
    const head = (e.name || 'Error') + (e.message ? ': ' + e.message : '');
    if (!stack) stack = '[' + head + ']';
    else if (!stack.startsWith(head) && !stack.includes(head)) stack = head + '\n' + stack;
    else if (!stack.startsWith(e.name || 'Error')) stack = head + '\n' + stack.slice(stack.indexOf(head) + head.length).replace(/^\n/, '');
    return stack;
  }

  function formatValue(ctx, v, recurseTimes, typed) {
    if (v === null) return 'null';
    if (typeof v !== 'object' && typeof v !== 'function') return formatPrimitive(v, ctx);
    if (ctx.customInspect && v[inspect.custom] && typeof v[inspect.custom] === 'function' && v[inspect.custom] !== inspect) {
      const r = v[inspect.custom](ctx.depth - recurseTimes, ctx, inspect);
      if (r !== v) return typeof r === 'string' ? r : formatValue(ctx, r, recurseTimes);
    }
    if (ctx.seen.includes(v)) {
      let idx = ctx.circular.get(v);
      if (idx === undefined) { idx = ctx.circular.size + 1; ctx.circular.set(v, idx); }
      return '[Circular *' + idx + ']';
    }
    return formatRaw(ctx, v, recurseTimes, typed);
  }

  function formatRaw(ctx, v, recurseTimes, typed) {
    let keys = Object.keys(v);
    const ctor = getCtorName(v);
    let braces, base = '', formatter = null, extrasType = kObject, prefix = '';
    let noEntries = false;
    const protoNull = Object.getPrototypeOf(v) === null;
    const tag = (ctor === null ? '[Object: null prototype] ' : '');
    if (Array.isArray(v)) {
      keys = keys.filter((k) => !/^(0|[1-9][0-9]*)$/.test(k));
      prefix = (ctor !== 'Array' ? (ctor === null ? '[Array(' + v.length + '): null prototype] ' : ctor + '(' + v.length + ') ') : '');
      braces = [prefix + '[', ']'];
      if (v.length === 0 && keys.length === 0) return braces[0] + ']';
      extrasType = kArray;
      formatter = formatArray;
    } else if (typeof v === 'function') {
      base = fnName(v);
      if (keys.length === 0) return base;
      braces = ['{', '}'];
    } else if (v instanceof Error) {
      base = formatError(v);
      keys = keys.filter((k) => k !== 'stack' && k !== 'message');
      if (keys.length === 0) return base;
      braces = ['{', '}'];
    } else if (v instanceof RegExp) {
      base = RegExp.prototype.toString.call(v);
      if (keys.length === 0) return base;
      braces = ['{', '}'];
    } else if (v instanceof Date) {
      base = isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString();
      if (keys.length === 0) return base;
      braces = ['{', '}'];
    } else if (v instanceof Map) {
      prefix = (ctor !== 'Map' ? ctor + ' ' : '') + 'Map(' + v.size + ') ';
      braces = [prefix + '{', '}'];
      if (v.size === 0 && keys.length === 0) return braces[0] + '}';
      formatter = formatMap;
    } else if (v instanceof Set) {
      prefix = (ctor !== 'Set' ? ctor + ' ' : '') + 'Set(' + v.size + ') ';
      braces = [prefix + '{', '}'];
      if (v.size === 0 && keys.length === 0) return braces[0] + '}';
      formatter = formatSet;
    } else if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
      if (typeof Buffer === 'function' && v instanceof Buffer) {
        const hex = [];
        const lim = Math.min(v.length, 50);
        for (let i = 0; i < lim; i++) hex.push(v[i].toString(16).padStart(2, '0'));
        return '<Buffer' + (hex.length ? ' ' + hex.join(' ') : '') + (v.length > 50 ? ` ... ${v.length - 50} more bytes` : '') + '>';
      }
      keys = keys.filter((k) => !/^(0|[1-9][0-9]*)$/.test(k));
      braces = [(ctor || 'TypedArray') + '(' + v.length + ') [', ']'];
      if (v.length === 0 && keys.length === 0) return braces[0] + ']';
      extrasType = kArray;
      formatter = formatTypedArray;
    } else if (v instanceof ArrayBuffer) {
      const b = new Uint8Array(v);
      const hex = [];
      for (let i = 0; i < Math.min(b.length, 50); i++) hex.push(b[i].toString(16).padStart(2, '0'));
      return 'ArrayBuffer { [Uint8Contents]: <' + hex.join(' ') + (b.length > 50 ? ` ... ${b.length - 50} more bytes` : '') + '>, byteLength: ' + b.length + ' }';
    } else if (v instanceof Promise) {
      const st = N.promiseState(v);
      braces = ['Promise {', '}'];
      formatter = (ctx, val, rt) => {
        if (st[0] === 'pending') return ['<pending>'];
        const s = formatValue(ctx, st[1], rt);
        return [st[0] === 'rejected' ? '<rejected> ' + s : s];
      };
    } else if (v instanceof WeakMap || v instanceof WeakSet) {
      return (v instanceof WeakMap ? 'WeakMap' : 'WeakSet') + ' { <items unknown> }';
    } else if (typeof v[Symbol.iterator] === 'function' && ctor && /Iterator$/.test(ctor)) {
      return 'Object [' + ctor + '] {}';
    } else {
      if (v instanceof Number || v instanceof String || v instanceof Boolean) {
        const t = v instanceof Number ? 'Number' : v instanceof String ? 'String' : 'Boolean';
        base = '[' + t + ': ' + formatPrimitive(v.valueOf(), ctx) + ']';
        if (v instanceof String) keys = keys.filter((k) => !/^(0|[1-9][0-9]*)$/.test(k));
        if (keys.length === 0) return base;
      }
      const symKeys = Object.getOwnPropertySymbols(v).filter((s) => Object.getOwnPropertyDescriptor(v, s).enumerable);
      keys = keys.concat(symKeys);
      const ctag = v[Symbol.toStringTag];
      let pre = '';
      if (ctor === null) pre = '[Object: null prototype] ';
      else if (ctor !== 'Object') pre = ctor + ' ';
      if (typeof ctag === 'string' && ctag !== '' && ctag !== ctor) pre = (ctor || 'Object') + ' [' + ctag + '] ';
      if (v === G) pre = '<ref *1> Object [global] ';
      braces = [pre + '{', '}'];
      if (keys.length === 0) {
        if (protoNull) return '[Object: null prototype] {}';
        return pre + '{}';
      }
    }
    if (recurseTimes > ctx.depth && ctx.depth !== null) {
      if (Array.isArray(v)) return '[Array]';
      const n = getCtorName(v);
      return '[' + (n === null ? 'Object: null prototype' : n) + ']';
    }
    recurseTimes++;
    ctx.seen.push(v);
    ctx.currentDepth = recurseTimes;
    let output;
    const saveExtra = ctx.extra;
    ctx.extra = false;
    try {
      output = formatter ? formatter(ctx, v, recurseTimes) : [];
      for (const k of keys) output.push(formatProperty(ctx, v, recurseTimes, k, extrasType));
    } finally {
      ctx.seen.pop();
    }
    let res;
    const idx = ctx.circular.get(v);
    if (idx !== undefined) {
      const ref = '<ref *' + idx + '>';
      if (base === '') braces[0] = ref + ' ' + braces[0];
      else base = ref + ' ' + base;
    }
    res = reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, v);
    ctx.extra = saveExtra;
    return res;
  }

  function formatArray(ctx, v, recurseTimes) {
    const out = [];
    const len = v.length;
    const max = Math.min(100, len);
    let holes = 0;
    let i = 0;
    for (; i < len && out.length < max; i++) {
      if (!Object.prototype.hasOwnProperty.call(v, i)) { holes++; continue; }
      if (holes) { out.push(`<${holes} empty item${holes > 1 ? 's' : ''}>`); holes = 0; if (out.length >= max) break; }
      out.push(formatProperty(ctx, v, recurseTimes, i, kArray));
    }
    if (holes) out.push(`<${holes} empty item${holes > 1 ? 's' : ''}>`);
    if (i < len) { out.push(`... ${len - i} more item${len - i > 1 ? 's' : ''}`); ctx.extra = true; }
    return out;
  }

  function formatTypedArray(ctx, v) {
    const out = [];
    const max = Math.min(100, v.length);
    for (let i = 0; i < max; i++) out.push(formatPrimitive(v[i], ctx));
    if (v.length > max) { out.push(`... ${v.length - max} more item${v.length - max > 1 ? 's' : ''}`); ctx.extra = true; }
    return out;
  }

  function formatMap(ctx, v, recurseTimes) {
    const out = [];
    ctx.indentationLvl += 2;
    for (const [k, val] of v) out.push(formatValue(ctx, k, recurseTimes) + ' => ' + formatValue(ctx, val, recurseTimes));
    ctx.indentationLvl -= 2;
    return out;
  }

  function formatSet(ctx, v, recurseTimes) {
    const out = [];
    ctx.indentationLvl += 2;
    for (const k of v) out.push(formatValue(ctx, k, recurseTimes));
    ctx.indentationLvl -= 2;
    return out;
  }

  function formatProperty(ctx, v, recurseTimes, key, type) {
    let str;
    const desc = Object.getOwnPropertyDescriptor(v, key) || { value: v[key], enumerable: true };
    if (desc.value !== undefined || !('get' in desc)) {
      const diff = (type === kArray) ? 2 : 3;
      ctx.indentationLvl += diff;
      str = formatValue(ctx, desc.value, recurseTimes);
      ctx.indentationLvl -= diff;
    } else if (desc.get !== undefined) {
      str = desc.set !== undefined ? '[Getter/Setter]' : '[Getter]';
    } else if (desc.set !== undefined) {
      str = '[Setter]';
    } else {
      str = 'undefined';
    }
    if (type === kArray) return str;
    return formatKey(key) + ': ' + str;
  }

  function inspect(v, opts) {
    const ctx = { seen: [], circular: new Map(), depth: 2, breakLength: 80, indentationLvl: 0, currentDepth: 0, customInspect: true, extra: false };
    if (opts && typeof opts === 'object') {
      if ('depth' in opts) ctx.depth = opts.depth === Infinity ? null : opts.depth;
      if ('breakLength' in opts) ctx.breakLength = opts.breakLength;
      if ('customInspect' in opts) ctx.customInspect = opts.customInspect;
    }
    return formatValue(ctx, v, 0);
  }
  inspect.custom = Symbol.for('nodejs.util.inspect.custom');
  inspect.defaultOptions = { depth: 2 };

  function format(...args) {
    let f = args[0];
    let out = '';
    let a = 1;
    if (typeof f === 'string') {
      if (args.length === 1) return f;
      let last = 0;
      for (let i = 0; i < f.length - 1; i++) {
        if (f.charCodeAt(i) !== 37) continue; // %
        const c = f[i + 1];
        if (c === '%') { out += f.slice(last, i) + '%'; last = i + 2; i++; continue; }
        if (a >= args.length) continue;
        let s;
        const x = args[a];
        switch (c) {
          case 's':
            if (typeof x === 'bigint') s = x + 'n';
            else if (typeof x === 'object' && x !== null) s = inspect(x, { depth: 0 });
            else if (typeof x === 'number' && Object.is(x, -0)) s = '-0';
            else s = String(x);
            break;
          case 'd': case 'i':
            if (typeof x === 'bigint') s = x + 'n';
            else if (typeof x === 'symbol') s = 'NaN';
            else { const nn = Number(x); s = String(c === 'i' ? Math.trunc(nn) : nn); }
            break;
          case 'f': s = typeof x === 'symbol' ? 'NaN' : String(parseFloat(x)); break;
          case 'j': try { s = JSON.stringify(x); } catch (e) { s = '[Circular]'; } break;
          case 'o': s = inspect(x, { depth: 4 }); break;
          case 'O': s = inspect(x); break;
          case 'c': s = ''; break;
          default: continue;
        }
        out += f.slice(last, i) + s;
        last = i + 2;
        i++;
        a++;
      }
      out += f.slice(last);
    } else {
      a = 0;
    }
    for (; a < args.length; a++) {
      const x = args[a];
      if (out !== '' || (a > 0)) out += ' ';
      out += typeof x === 'string' ? x : inspect(x);
    }
    return out;
  }

  function promisify(fn) {
    if (typeof fn !== 'function') throw new TypeError('The "original" argument must be of type function');
    if (fn[promisify.custom]) return fn[promisify.custom];
    return function (...args) {
      return new Promise((resolve, reject) => {
        fn.call(this, ...args, (err, ...vals) => (err ? reject(err) : resolve(vals.length > 1 ? vals : vals[0])));
      });
    };
  }
  promisify.custom = Symbol.for('nodejs.util.promisify.custom');

  function isDeepStrictEqual(a, b, seen) {
    if (Object.is(a, b)) return true;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
    if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
    if (a instanceof Date) return a.getTime() === b.getTime();
    if (a instanceof RegExp) return String(a) === String(b);
    if (a instanceof Map || a instanceof Set) {
      if (a.size !== b.size) return false;
      for (const [k, v] of a.entries()) {
        if (!b.has(k)) return false;
        if (a instanceof Map && !isDeepStrictEqual(v, b.get(k))) return false;
      }
      return true;
    }
    const ka = Object.keys(a), kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    for (const k of ka) {
      if (!Object.prototype.hasOwnProperty.call(b, k) || !isDeepStrictEqual(a[k], b[k])) return false;
    }
    return true;
  }

  const util = {
    inspect, format, promisify, isDeepStrictEqual,
    formatWithOptions: (o, ...a) => format(...a),
    inherits(ctor, superCtor) {
      Object.defineProperty(ctor, 'super_', { value: superCtor, writable: true, configurable: true });
      Object.setPrototypeOf(ctor.prototype, superCtor.prototype);
    },
    deprecate: (fn) => fn,
    callbackify(fn) {
      return function (...args) {
        const cb = args.pop();
        fn.apply(this, args).then((v) => cb(null, v), (e) => cb(e));
      };
    },
    isArray: Array.isArray,
    types: {
      isPromise: (v) => v instanceof Promise,
      isDate: (v) => v instanceof Date,
      isRegExp: (v) => v instanceof RegExp,
      isMap: (v) => v instanceof Map,
      isSet: (v) => v instanceof Set,
      isTypedArray: (v) => ArrayBuffer.isView(v) && !(v instanceof DataView),
      isUint8Array: (v) => v instanceof Uint8Array,
      isNativeError: (v) => v instanceof Error,
      isAsyncFunction: (v) => typeof v === 'function' && v.constructor && v.constructor.name === 'AsyncFunction',
    },
    TextEncoder: null, TextDecoder: null,
  };
  builtins.util = util;

  // -------------------------------------------------------------- events
  class EventEmitter {
    constructor() { this._events = Object.create(null); this._maxListeners = 10; }
    _ev() { if (!this._events) this._events = Object.create(null); return this._events; }
    on(name, fn) {
      const ev = this._ev();
      if (ev.newListener && name !== 'newListener') this.emit('newListener', name, fn);
      (ev[name] || (ev[name] = [])).push(fn);
      return this;
    }
    addListener(name, fn) { return this.on(name, fn); }
    prependListener(name, fn) { (this._ev()[name] || (this._ev()[name] = [])).unshift(fn); return this; }
    once(name, fn) {
      const w = (...a) => { this.removeListener(name, w); return fn.apply(this, a); };
      w.listener = fn;
      return this.on(name, w);
    }
    prependOnceListener(name, fn) {
      const w = (...a) => { this.removeListener(name, w); return fn.apply(this, a); };
      w.listener = fn;
      return this.prependListener(name, w);
    }
    off(name, fn) { return this.removeListener(name, fn); }
    removeListener(name, fn) {
      const l = this._ev()[name];
      if (!l) return this;
      const i = l.findIndex((x) => x === fn || x.listener === fn);
      if (i >= 0) l.splice(i, 1);
      if (l.length === 0) delete this._ev()[name];
      return this;
    }
    removeAllListeners(name) {
      if (name === undefined) this._events = Object.create(null);
      else delete this._ev()[name];
      return this;
    }
    emit(name, ...args) {
      const l = this._ev()[name];
      if (!l || l.length === 0) {
        if (name === 'error') {
          const e = args[0];
          if (e instanceof Error) throw e;
          const err = new Error('Unhandled error.' + (e === undefined ? '' : ' (' + inspect(e) + ')'));
          err.context = e;
          throw err;
        }
        return false;
      }
      for (const fn of l.slice()) fn.apply(this, args);
      return true;
    }
    listeners(name) { return (this._ev()[name] || []).map((x) => x.listener || x); }
    rawListeners(name) { return (this._ev()[name] || []).slice(); }
    listenerCount(name) { return (this._ev()[name] || []).length; }
    eventNames() { return Reflect.ownKeys(this._ev()); }
    setMaxListeners(n) { this._maxListeners = n; return this; }
    getMaxListeners() { return this._maxListeners; }
  }
  EventEmitter.EventEmitter = EventEmitter;
  EventEmitter.defaultMaxListeners = 10;
  EventEmitter.once = (em, name) => new Promise((resolve, reject) => {
    const onErr = (e) => { em.removeListener(name, onOk); reject(e); };
    const onOk = (...a) => { if (name !== 'error') em.removeListener('error', onErr); resolve(a); };
    em.once(name, onOk);
    if (name !== 'error') em.once('error', onErr);
  });
  builtins.events = EventEmitter;

  // ------------------------------------------------------------- process
  // asyncIter is an async iterator over the array items() returns (goja
  // has no async generators).
  function asyncIter(items) {
    let list = null, i = 0;
    return {
      next() {
        try {
          if (list === null) list = items();
          return Promise.resolve(i < list.length ? { value: list[i++], done: false } : { value: undefined, done: true });
        } catch (e) { return Promise.reject(e); }
      },
      return() { i = Infinity; return Promise.resolve({ value: undefined, done: true }); },
      [Symbol.asyncIterator]() { return this; },
    };
  }

  const tickQueue = [];
  function runTicks() {
    while (tickQueue.length) {
      const [fn, args] = tickQueue.shift();
      fn(...args);
    }
  }
  // runTask is every entry of the event loop into JavaScript: the task,
  // then process.nextTick callbacks (goja runs the promise jobs when the
  // outermost call returns).
  function runTask(fn, ...args) {
    try {
      if (typeof fn === 'function') fn(...args);
    } finally {
      runTicks();
    }
  }

  const process = new EventEmitter();
  const mkStream = (fd) => {
    const s = new EventEmitter();
    s.fd = fd;
    s.isTTY = false;
    s.writable = true;
    s.columns = 80;
    s.write = (chunk, enc, cb) => {
      if (typeof enc === 'function') cb = enc;
      if (typeof chunk === 'string' && enc && enc !== 'utf8' && enc !== 'utf-8' && typeof enc === 'string') chunk = Buffer.from(chunk, enc);
      N.write(fd, chunk);
      if (typeof cb === 'function') process.nextTick(cb);
      return true;
    };
    s.end = (chunk, enc, cb) => { if (typeof chunk === 'function') cb = chunk; else if (chunk != null) s.write(chunk, enc); if (typeof cb === 'function') process.nextTick(cb); s.emit('finish'); return s; };
    s.cork = s.uncork = () => {};
    s.getColorDepth = () => 1;
    s.hasColors = () => false;
    return s;
  };
  process.stdout = mkStream(1);
  process.stderr = mkStream(2);
  const stdin = new EventEmitter();
  stdin.fd = 0;
  stdin.isTTY = false;
  let stdinStarted = false;
  stdin._startReading = () => {
    if (stdinStarted) return;
    stdinStarted = true;
    setImmediate(() => {
      const data = Buffer.from(N.fs.readFile(0));
      if (data.length) stdin.emit('data', stdin._enc ? data.toString(stdin._enc) : data);
      stdin.emit('end');
      stdin.emit('close');
    });
  };
  stdin.setEncoding = (e) => { stdin._enc = e || 'utf8'; return stdin; };
  stdin.resume = () => { stdin._startReading(); return stdin; };
  stdin.pause = () => stdin;
  stdin.on = function (name, fn) {
    EventEmitter.prototype.on.call(this, name, fn);
    if (name === 'data' || name === 'end' || name === 'readable') stdin._startReading();
    return this;
  };
  stdin.read = () => null;
  stdin[Symbol.asyncIterator] = () => asyncIter(() => {
    const data = Buffer.from(N.fs.readFile(0));
    return data.length ? [stdin._enc ? data.toString(stdin._enc) : data] : [];
  });
  process.stdin = stdin;
  process.argv = ['/usr/local/bin/node'];
  process.argv0 = 'node';
  process.execArgv = [];
  process.execPath = '/usr/local/bin/node';
  process.env = N.env;
  process.platform = 'linux';
  process.arch = 'x64';
  process.pid = 1;
  process.ppid = 0;
  process.title = 'node';
  process.version = N.version;
  process.versions = { node: N.version.slice(1), agentfs: 'goja' };
  process.release = { name: 'node' };
  process.features = {};
  process.config = { variables: {} };
  process.exitCode = undefined;
  process.cwd = () => N.cwd();
  process.chdir = (d) => N.chdir(String(d));
  process.umask = () => 0o22;
  process.getuid = process.geteuid = () => N.user.uid;
  process.getgid = process.getegid = () => N.user.gid;
  process.kill = () => { throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' }); };
  process.abort = () => N.exit(134);
  process.uptime = () => N.hrtime() / 1e9;
  process.hrtime = (prev) => {
    const ns = N.hrtime();
    let s = Math.floor(ns / 1e9), n = Math.floor(ns % 1e9);
    if (prev) { s -= prev[0]; n -= prev[1]; if (n < 0) { s--; n += 1e9; } }
    return [s, n];
  };
  process.hrtime.bigint = () => BigInt(Math.floor(N.hrtime()));
  process.memoryUsage = () => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 });
  process.memoryUsage.rss = () => 0;
  process.cpuUsage = () => ({ user: 0, system: 0 });
  process.emitWarning = (w) => { N.write(2, '(node) Warning: ' + (w && w.message ? w.message : String(w)) + '\n'); };
  process.nextTick = (fn, ...args) => {
    if (typeof fn !== 'function') throw new TypeError('The "callback" argument must be of type function');
    tickQueue.push([fn, args]);
  };
  let exiting = false;
  process.exit = (code) => {
    if (code !== undefined) process.exitCode = code;
    if (!exiting) {
      exiting = true;
      process.emit('exit', process.exitCode === undefined ? 0 : Number(process.exitCode) | 0);
    }
    N.exit(process.exitCode === undefined ? 0 : Number(process.exitCode) | 0);
  };
  process.reallyExit = process.exit;
  process.binding = () => { throw new Error('No such module'); };
  process.mainModule = undefined;
  builtins.process = process;

  function emitExit() {
    if (exiting) return;
    exiting = true;
    process.emit('beforeExit', process.exitCode === undefined ? 0 : process.exitCode);
    process.emit('exit', process.exitCode === undefined ? 0 : Number(process.exitCode) | 0);
  }

  // -------------------------------------------------------------- timers
  class Timeout {
    constructor(id) { this._id = id; }
    ref() { N.refTimer(this._id, true); return this; }
    unref() { N.refTimer(this._id, false); return this; }
    hasRef() { return true; }
    refresh() { N.refreshTimer(this._id); return this; }
    close() { N.clearTimer(this._id); return this; }
    [Symbol.toPrimitive]() { return this._id; }
  }
  const timerId = (t) => (t instanceof Timeout ? t._id : t);
  const timers = {
    setTimeout: (fn, ms, ...args) => new Timeout(N.setTimer(fn, ms, false, args)),
    setInterval: (fn, ms, ...args) => new Timeout(N.setTimer(fn, ms, true, args)),
    clearTimeout: (t) => { if (t != null) N.clearTimer(Number(timerId(t))); },
    clearInterval: (t) => { if (t != null) N.clearTimer(Number(timerId(t))); },
    setImmediate: (fn, ...args) => {
      if (typeof fn !== 'function') throw new TypeError('The "callback" argument must be of type function');
      return N.setImmediate(fn, args);
    },
    clearImmediate: (im) => { if (im) N.clearImmediate(im); },
  };
  builtins.timers = timers;
  builtins['timers/promises'] = {
    setTimeout: (ms, value) => new Promise((r) => timers.setTimeout(() => r(value), ms)),
    setImmediate: (value) => new Promise((r) => timers.setImmediate(() => r(value))),
    setInterval: (ms, value) => ({
      next: () => new Promise((r) => timers.setTimeout(() => r({ value, done: false }), ms)),
      return: () => Promise.resolve({ done: true }),
      [Symbol.asyncIterator]() { return this; },
    }),
    scheduler: { wait: (ms) => new Promise((r) => timers.setTimeout(r, ms)), yield: () => new Promise((r) => timers.setImmediate(r)) },
  };

  // -------------------------------------------------------------- Buffer
  const B = G.Buffer;
  B.isBuffer = (b) => b instanceof B;
  B.isEncoding = (e) => ['utf8', 'utf-8', 'hex', 'base64', 'base64url', 'ascii', 'latin1', 'binary', 'ucs2', 'utf16le'].includes(String(e).toLowerCase());
  B.byteLength = (s, enc) => (typeof s === 'string' ? B.from(s, enc).length : s.byteLength);
  const bAlloc = B.alloc;
  B.alloc = function (n, fill, enc) { if (typeof n === 'number') checkAlloc(n); return bAlloc.call(B, n, fill, enc); };
  B.allocUnsafe = B.allocUnsafeSlow = (n) => B.alloc(n);
  B.compare = (a, b) => a.compare(b);
  const bproto = B.prototype;
  bproto.slice = bproto.subarray = function (start, end) {
    const u = Uint8Array.prototype.subarray.call(this, start, end);
    return B.from(u.buffer, u.byteOffset, u.length);
  };
  bproto.toJSON = function () { return { type: 'Buffer', data: Array.from(this) }; };
  bproto.compare = function (o) {
    const n = Math.min(this.length, o.length);
    for (let i = 0; i < n; i++) if (this[i] !== o[i]) return this[i] < o[i] ? -1 : 1;
    return this.length === o.length ? 0 : this.length < o.length ? -1 : 1;
  };
  bproto.copy = function (target, tStart = 0, sStart = 0, sEnd = this.length) {
    const src = Uint8Array.prototype.subarray.call(this, sStart, sEnd);
    const n = Math.min(src.length, target.length - tStart);
    target.set(src.subarray(0, n), tStart);
    return n;
  };
  const u8indexOf = Uint8Array.prototype.indexOf;
  bproto.indexOf = function (v, from = 0, enc) {
    if (typeof v === 'number') return u8indexOf.call(this, v, from);
    const needle = typeof v === 'string' ? B.from(v, enc) : v;
    if (from < 0) from = Math.max(this.length + from, 0);
    outer: for (let i = from; i <= this.length - needle.length; i++) {
      for (let j = 0; j < needle.length; j++) if (this[i + j] !== needle[j]) continue outer;
      return i;
    }
    return -1;
  };
  bproto.includes = function (v, from, enc) { return this.indexOf(v, from, enc) !== -1; };
  bproto.toLocaleString = bproto.toString;
  bproto.inspect = function () { return inspect(this); };
  // latin1 (binary) and ascii, which goja_nodejs's Buffer lacks.
  const byteEnc = (e) => { e = typeof e === 'string' ? e.toLowerCase() : e; return e === 'latin1' || e === 'binary' ? 'latin1' : e === 'ascii' ? 'ascii' : null; };
  const bToString = bproto.toString;
  bproto.toString = function (enc, start, end) {
    const be = byteEnc(enc);
    if (!be) return bToString.call(this, enc, start, end);
    const u = Uint8Array.prototype.subarray.call(this, start || 0, end === undefined ? this.length : end);
    let s = '';
    for (let i = 0; i < u.length; i += 8192) s += String.fromCharCode.apply(null, Array.from(u.subarray(i, i + 8192), be === 'ascii' ? (x) => x & 0x7f : (x) => x));
    return s;
  };
  const bFrom = B.from;
  B.from = function (v, enc, len) {
    if (typeof v === 'string' && byteEnc(enc)) {
      const u = new Uint8Array(v.length);
      for (let i = 0; i < v.length; i++) u[i] = v.charCodeAt(i) & 0xff;
      return bFrom.call(B, u.buffer, 0, u.length);
    }
    return bFrom.call(B, v, enc, len);
  };
  G.atob = (s) => B.from(String(s), 'base64').toString('latin1');
  G.btoa = (s) => B.from(String(s), 'latin1').toString('base64');
  builtins.buffer = { Buffer: B, constants: { MAX_LENGTH: 2 ** 32 }, kMaxLength: 2 ** 32, atob: G.atob, btoa: G.btoa };

  class TextEncoder {
    get encoding() { return 'utf-8'; }
    encode(s = '') { return new Uint8Array(N.utf8Encode(String(s))); }
    encodeInto(s, dest) { const b = this.encode(s); const n = Math.min(b.length, dest.length); dest.set(b.subarray(0, n)); return { read: s.length, written: n }; }
  }
  class TextDecoder {
    constructor(enc = 'utf-8') { this.encoding = String(enc).toLowerCase(); }
    decode(b) {
      if (b === undefined) return '';
      if (this.encoding === 'utf-8' || this.encoding === 'utf8') return N.utf8Decode(b);
      return B.from(b.buffer || b, b.byteOffset || 0, b.byteLength).toString(this.encoding);
    }
  }
  util.TextEncoder = TextEncoder;
  util.TextDecoder = TextDecoder;

  // ---------------------------------------------------------------- path
  function normalizeString(p, allowAbove) {
    const out = [];
    for (const seg of p.split('/')) {
      if (seg === '' || seg === '.') continue;
      if (seg === '..') {
        if (out.length && out[out.length - 1] !== '..') out.pop();
        else if (allowAbove) out.push('..');
      } else out.push(seg);
    }
    return out.join('/');
  }
  const checkStr = (p, name = 'path') => {
    if (typeof p !== 'string') {
      const e = new TypeError(`The "${name}" argument must be of type string. Received ${inspect(p)}`);
      e.code = 'ERR_INVALID_ARG_TYPE';
      throw e;
    }
  };
  const path = {
    sep: '/',
    delimiter: ':',
    resolve(...args) {
      let resolved = '', abs = false;
      for (let i = args.length - 1; i >= -1 && !abs; i--) {
        const p = i >= 0 ? args[i] : process.cwd();
        checkStr(p, `paths[${i}]`);
        if (p === '') continue;
        resolved = p + '/' + resolved;
        abs = p[0] === '/';
      }
      resolved = normalizeString(resolved, !abs);
      return abs ? '/' + resolved : resolved.length > 0 ? resolved : '.';
    },
    normalize(p) {
      checkStr(p);
      if (p === '') return '.';
      const abs = p[0] === '/';
      const trailing = p[p.length - 1] === '/';
      let r = normalizeString(p, !abs);
      if (r === '' && !abs) r = '.';
      if (r !== '' && trailing) r += '/';
      return abs ? '/' + r : r;
    },
    isAbsolute(p) { checkStr(p); return p.length > 0 && p[0] === '/'; },
    join(...args) {
      if (args.length === 0) return '.';
      args.forEach((a) => checkStr(a));
      const j = args.filter((a) => a !== '').join('/');
      return j === '' ? '.' : path.normalize(j);
    },
    relative(from, to) {
      checkStr(from, 'from'); checkStr(to, 'to');
      if (from === to) return '';
      from = path.resolve(from); to = path.resolve(to);
      if (from === to) return '';
      const f = from === '/' ? [] : from.slice(1).split('/');
      const t = to === '/' ? [] : to.slice(1).split('/');
      let i = 0;
      while (i < f.length && i < t.length && f[i] === t[i]) i++;
      return f.slice(i).map(() => '..').concat(t.slice(i)).join('/');
    },
    dirname(p) {
      checkStr(p);
      if (p.length === 0) return '.';
      const abs = p[0] === '/';
      let end = -1, matched = true;
      for (let i = p.length - 1; i >= 1; --i) {
        if (p[i] === '/') { if (!matched) { end = i; break; } } else matched = false;
      }
      if (end === -1) return abs ? '/' : '.';
      if (abs && end === 1) return '//';
      return p.slice(0, end);
    },
    basename(p, ext) {
      checkStr(p);
      let end = p.length;
      while (end > 0 && p[end - 1] === '/') end--;
      if (end === 0) return '';
      let start = p.lastIndexOf('/', end - 1) + 1;
      let b = p.slice(start, end);
      if (ext !== undefined && b.endsWith(ext) && b !== ext) b = b.slice(0, b.length - ext.length);
      return b;
    },
    extname(p) {
      checkStr(p);
      const b = path.basename(p);
      const i = b.lastIndexOf('.');
      if (i <= 0) return '';
      return b.slice(i);
    },
    parse(p) {
      checkStr(p);
      const root = p[0] === '/' ? '/' : '';
      const base = path.basename(p);
      const ext = path.extname(p);
      let dir = path.dirname(p);
      if (dir === '.' && !p.includes('/')) dir = '';
      return { root, dir, base, ext, name: ext ? base.slice(0, base.length - ext.length) : base };
    },
    format(o) {
      const dir = o.dir || o.root;
      const base = o.base || ((o.name || '') + (o.ext ? (o.ext[0] === '.' ? '' : '.') + o.ext : ''));
      if (!dir) return base;
      return dir === o.root ? dir + base : dir + '/' + base;
    },
    toNamespacedPath: (p) => p,
    matchesGlob: undefined,
  };
  path.posix = path;
  path.win32 = path;
  builtins.path = path;
  builtins['path/posix'] = path;

  // ------------------------------------------------------------------ fs
  const S_IFMT = 0o170000, S_IFDIR = 0o040000, S_IFREG = 0o100000, S_IFLNK = 0o120000;
  const constants = {
    F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1, O_RDONLY: 0, O_WRONLY: 1, O_RDWR: 2, O_CREAT: 64, O_EXCL: 128,
    O_TRUNC: 512, O_APPEND: 1024, S_IFMT, S_IFREG, S_IFDIR, S_IFLNK, COPYFILE_EXCL: 1, COPYFILE_FICLONE: 2, COPYFILE_FICLONE_FORCE: 4,
  };
  class Stats {
    constructor(o) {
      Object.assign(this, o);
      this.atime = new Date(o.atimeMs);
      this.mtime = new Date(o.mtimeMs);
      this.ctime = new Date(o.ctimeMs);
      this.birthtime = new Date(o.birthtimeMs);
    }
    isFile() { return (this.mode & S_IFMT) === S_IFREG; }
    isDirectory() { return (this.mode & S_IFMT) === S_IFDIR; }
    isSymbolicLink() { return (this.mode & S_IFMT) === S_IFLNK; }
    isFIFO() { return (this.mode & S_IFMT) === 0o010000; }
    isSocket() { return (this.mode & S_IFMT) === 0o140000; }
    isCharacterDevice() { return (this.mode & S_IFMT) === 0o020000; }
    isBlockDevice() { return (this.mode & S_IFMT) === 0o060000; }
  }
  class Dirent {
    constructor(name, type, dir) { this.name = name; this.parentPath = dir; this.path = dir; this._t = type; }
    isFile() { return this._t === S_IFREG; }
    isDirectory() { return this._t === S_IFDIR; }
    isSymbolicLink() { return this._t === S_IFLNK; }
    isFIFO() { return false; }
    isSocket() { return false; }
    isCharacterDevice() { return false; }
    isBlockDevice() { return false; }
  }
  const F = N.fs;
  const pathOf = (p) => {
    if (p instanceof URL) return p.pathname;
    if (typeof p === 'string' || typeof p === 'number') return p;
    if (p instanceof Uint8Array) return B.from(p).toString();
    const e = new TypeError(`The "path" argument must be of type string or an instance of Buffer or URL. Received ${inspect(p)}`);
    e.code = 'ERR_INVALID_ARG_TYPE';
    throw e;
  };
  const encOf = (o) => (typeof o === 'string' ? o : o && o.encoding) || null;
  const decode = (ab, enc) => {
    const b = B.from(ab);
    return enc && enc !== 'buffer' ? b.toString(enc) : b;
  };
  const dataOf = (d, o) => {
    if (typeof d === 'string') {
      const enc = encOf(o);
      return enc && enc !== 'utf8' && enc !== 'utf-8' ? B.from(d, enc) : d;
    }
    if (d instanceof Uint8Array || ArrayBuffer.isView(d)) return d;
    if (d instanceof ArrayBuffer) return new Uint8Array(d);
    const e = new TypeError(`The "data" argument must be of type string or an instance of Buffer, TypedArray, or DataView. Received ${inspect(d)}`);
    e.code = 'ERR_INVALID_ARG_TYPE';
    throw e;
  };
  const fs = {
    constants,
    Stats,
    Dirent,
    readFileSync(p, o) { return decode(F.readFile(pathOf(p)), encOf(o)); },
    writeFileSync(p, d, o) { F.writeFile(pathOf(p), dataOf(d, o), (o && o.flag) || 'w'); },
    appendFileSync(p, d, o) { F.writeFile(pathOf(p), dataOf(d, o), (o && o.flag) || 'a'); },
    existsSync(p) { try { return F.exists(pathOf(p)); } catch (e) { return false; } },
    statSync(p, o) { const s = F.stat(pathOf(p), true, o && o.throwIfNoEntry === false); return s && new Stats(s); },
    lstatSync(p, o) { const s = F.stat(pathOf(p), false, o && o.throwIfNoEntry === false); return s && new Stats(s); },
    readdirSync(p, o) {
      const dir = path.resolve(String(pathOf(p)));
      const list = F.readdir(pathOf(p));
      let out = list.map(([name, t]) => (o && o.withFileTypes ? new Dirent(name, t, dir) : name));
      if (o && o.recursive) {
        out = [];
        const walk = (d, rel) => {
          for (const [name, t] of F.readdir(d)) {
            const r = rel ? rel + '/' + name : name;
            out.push(o.withFileTypes ? new Dirent(name, t, d) : r);
            if (t === S_IFDIR) walk(d + '/' + name, r);
          }
        };
        walk(dir, '');
      }
      if (encOf(o) === 'buffer') out = out.map((x) => B.from(x));
      return out;
    },
    mkdirSync(p, o) { const r = typeof o === 'object' && o ? !!o.recursive : false; const mode = typeof o === 'number' ? o : o && o.mode; return F.mkdir(pathOf(p), r, mode); },
    mkdtempSync(prefix) {
      for (;;) {
        const p = prefix + Math.random().toString(36).slice(2, 8);
        try { F.mkdir(p, false, 0o700); return p; } catch (e) { if (e.code !== 'EEXIST') throw e; }
      }
    },
    rmSync(p, o) { F.rm(pathOf(p), !!(o && o.recursive), !!(o && o.force)); },
    rmdirSync(p, o) { F.rmdir(pathOf(p), !!(o && o.recursive)); },
    unlinkSync(p) { F.unlink(pathOf(p)); },
    renameSync(a, b) { F.rename(pathOf(a), pathOf(b)); },
    copyFileSync(a, b, mode) { F.copyFile(pathOf(a), pathOf(b), mode | 0); },
    cpSync(a, b, o) {
      const s = fs.statSync(a);
      if (s.isDirectory()) {
        if (!(o && o.recursive)) { const e = new Error(`Recursive option is required to copy a directory: ${a}`); e.code = 'ERR_FS_EISDIR'; throw e; }
        fs.mkdirSync(b, { recursive: true });
        for (const n of fs.readdirSync(a)) fs.cpSync(a + '/' + n, b + '/' + n, o);
      } else F.copyFile(pathOf(a), pathOf(b), 0);
    },
    symlinkSync(t, p) { F.symlink(String(t), pathOf(p)); },
    linkSync(a, b) { F.link(pathOf(a), pathOf(b)); },
    readlinkSync(p, o) { const r = F.readlink(pathOf(p)); return encOf(o) === 'buffer' ? B.from(r) : r; },
    realpathSync(p) { return F.realpath(pathOf(p)); },
    accessSync(p, mode) { F.access(pathOf(p), mode | 0); },
    chmodSync(p, m) { F.chmod(pathOf(p), typeof m === 'string' ? parseInt(m, 8) : m); },
    chownSync() {},
    lchownSync() {},
    truncateSync(p, len) { F.truncate(pathOf(p), len | 0); },
    utimesSync(p, a, m) { const t = (x) => (x instanceof Date ? x.getTime() / 1000 : Number(x)); F.utimes(pathOf(p), t(a), t(m)); },
    openSync(p, flags, mode) { return F.open(pathOf(p), typeof flags === 'number' ? numFlags(flags) : flags, mode); },
    closeSync(fd) { F.close(fd); },
    readSync(fd, buf, off, len, pos) {
      if (typeof off === 'object' && off !== null) ({ offset: off = 0, length: len = buf.length - off, position: pos } = off);
      off = off | 0;
      if (len === undefined) len = buf.length - off;
      const data = new Uint8Array(F.read(fd, len, pos));
      buf.set(data, off);
      return data.length;
    },
    writeSync(fd, d, a, b) {
      if (typeof d === 'string') return F.write(fd, d);
      const off = a | 0, len = b === undefined ? d.byteLength - off : b;
      return F.write(fd, new Uint8Array(d.buffer, d.byteOffset + off, len));
    },
    fstatSync(fd) { return new Stats(F.fstat(fd)); },
    fsyncSync() {},
    fdatasyncSync() {},
    watch() { throw Object.assign(new Error('fs.watch is not available in the sandbox'), { code: 'ENOSYS' }); },
  };
  function numFlags(f) {
    const acc = f & 3;
    let s = acc === 0 ? 'r' : acc === 1 ? 'w' : 'r+';
    if (f & constants.O_APPEND) s = acc === 2 ? 'a+' : 'a';
    else if (acc !== 0 && (f & constants.O_TRUNC)) s = acc === 2 ? 'w+' : 'w';
    if (f & constants.O_EXCL) s += 'x';
    return s;
  }
  fs.exists = (p, cb) => { const r = fs.existsSync(p); setImmediate(() => cb(r)); };
  // Callback and promise forms run the synchronous operation and deliver
  // its result on a later turn of the loop, as Node's would.
  const asyncNames = ['readFile', 'writeFile', 'appendFile', 'stat', 'lstat', 'readdir', 'mkdir', 'mkdtemp', 'rm', 'rmdir', 'unlink', 'rename', 'copyFile', 'cp', 'symlink', 'link', 'readlink', 'realpath', 'access', 'chmod', 'chown', 'lchown', 'truncate', 'utimes', 'open', 'close', 'read', 'write', 'fstat', 'fsync', 'fdatasync'];
  const promises = { constants };
  for (const name of asyncNames) {
    const sync = fs[name + 'Sync'];
    fs[name] = function (...args) {
      const cb = args.pop();
      if (typeof cb !== 'function') {
        const e = new TypeError('The "cb" argument must be of type function. Received ' + inspect(cb));
        e.code = 'ERR_INVALID_ARG_TYPE';
        throw e;
      }
      let res, err = null;
      try { res = sync.apply(fs, args); } catch (e) { err = e; }
      if (name === 'read' && !err) setImmediate(() => cb(null, res, args[1]));
      else if (name === 'write' && !err) setImmediate(() => cb(null, res, args[1]));
      else setImmediate(() => (err ? cb(err) : cb(null, res)));
    };
    if (name !== 'close' && name !== 'read' && name !== 'write' && name !== 'fstat' && name !== 'open' && name !== 'fsync' && name !== 'fdatasync') {
      promises[name] = (...args) => new Promise((resolve, reject) => {
        try { resolve(sync.apply(fs, args)); } catch (e) { reject(e); }
      });
    }
  }
  promises.readFile = (p, o) => new Promise((resolve, reject) => {
    try { resolve(p instanceof FileHandle ? p.readFileSync(o) : fs.readFileSync(p, o)); } catch (e) { reject(e); }
  });
  class FileHandle {
    constructor(fd) { this.fd = fd; }
    readFileSync(o) { return decode(F.readFile(this.fd), encOf(o)); }
    async readFile(o) { return this.readFileSync(o); }
    async writeFile(d, o) { fs.writeSync(this.fd, dataOf(d, o)); }
    async appendFile(d, o) { fs.writeSync(this.fd, dataOf(d, o)); }
    async write(d, ...a) { const n = fs.writeSync(this.fd, d, ...a); return { bytesWritten: n, buffer: d }; }
    async read(buf, off, len, pos) { const n = fs.readSync(this.fd, buf, off, len, pos); return { bytesRead: n, buffer: buf }; }
    async stat() { return fs.fstatSync(this.fd); }
    async close() { F.close(this.fd); }
    async sync() {}
    async truncate() { throw Object.assign(new Error('ENOSYS: ftruncate'), { code: 'ENOSYS' }); }
  }
  promises.open = async (p, flags, mode) => new FileHandle(fs.openSync(p, flags, mode));
  promises.opendir = async (p) => fs.opendirSync(p);
  fs.opendirSync = (p) => {
    const ents = fs.readdirSync(p, { withFileTypes: true });
    let i = 0;
    return {
      path: p,
      readSync: () => (i < ents.length ? ents[i++] : null),
      read: async () => (i < ents.length ? ents[i++] : null),
      closeSync() {}, close: async () => {},
      [Symbol.asyncIterator]: () => asyncIter(() => ents.slice(i)),
    };
  };
  fs.promises = promises;
  // Streams: a file read or written whole, as events.
  fs.createReadStream = (p, o) => {
    const s = new EventEmitter();
    const enc = encOf(o);
    s.setEncoding = (e) => { s._enc = e; return s; };
    s.pipe = (dest) => { s.on('data', (c) => dest.write(c)); s.on('end', () => { if (dest !== process.stdout && dest !== process.stderr) dest.end(); }); return dest; };
    s.path = p;
    s.resume = () => s;
    s.pause = () => s;
    s.destroy = () => { s.destroyed = true; return s; };
    s[Symbol.asyncIterator] = () => asyncIter(() => [fs.readFileSync(p, s._enc || enc)]);
    setImmediate(() => {
      let d;
      try { d = fs.readFileSync(p, s._enc || enc); } catch (e) { s.emit('error', e); return; }
      s.emit('open');
      s.emit('ready');
      if (d.length) s.emit('data', d);
      s.emit('end');
      s.emit('close');
    });
    return s;
  };
  fs.createWriteStream = (p, o) => {
    const s = new EventEmitter();
    const flag = (o && o.flags) || 'w';
    let fd;
    try { fd = fs.openSync(p, flag); } catch (e) { setImmediate(() => s.emit('error', e)); }
    s.path = p;
    s.bytesWritten = 0;
    s.write = (c, enc, cb) => {
      if (typeof enc === 'function') cb = enc;
      if (fd !== undefined) s.bytesWritten += fs.writeSync(fd, typeof c === 'string' ? B.from(c, typeof enc === 'string' ? enc : 'utf8') : c);
      if (typeof cb === 'function') setImmediate(cb);
      return true;
    };
    s.end = (c, enc, cb) => {
      if (typeof c === 'function') { cb = c; c = undefined; }
      if (typeof enc === 'function') { cb = enc; enc = undefined; }
      if (c != null) s.write(c, enc);
      if (fd !== undefined) { fs.closeSync(fd); fd = undefined; }
      setImmediate(() => { s.emit('finish'); s.emit('close'); if (cb) cb(); });
      return s;
    };
    s.close = (cb) => s.end(cb);
    s.destroy = () => { if (fd !== undefined) { fs.closeSync(fd); fd = undefined; } return s; };
    setImmediate(() => { s.emit('open', fd); s.emit('ready'); });
    return s;
  };
  builtins.fs = fs;
  builtins['fs/promises'] = promises;

  // -------------------------------------------------------- child_process
  const shArgs = (cmd) => ['sh', '-c', String(cmd)];
  const cpOpts = (o, inherit) => {
    o = o || {};
    return { cwd: o.cwd, env: o.env, input: o.input, inherit: inherit || o.stdio === 'inherit' || (Array.isArray(o.stdio) && o.stdio[1] === 'inherit') };
  };
  const outOf = (ab, enc) => (enc && enc !== 'buffer' ? B.from(ab).toString(enc) : B.from(ab));
  function cmdError(cmdline, r, enc) {
    const err = new Error('Command failed: ' + cmdline + (r.stderr.byteLength ? '\n' + B.from(r.stderr).toString() : ''));
    err.status = r.status;
    err.signal = null;
    err.stdout = outOf(r.stdout, enc);
    err.stderr = outOf(r.stderr, enc);
    err.output = [null, err.stdout, err.stderr];
    err.pid = 0;
    return err;
  }
  const child_process = {
    execSync(cmd, o) {
      o = o || {};
      const r = N.spawnSync(shArgs(cmd), cpOpts(o));
      if (o.stdio !== 'inherit' && r.stderr.byteLength && !(Array.isArray(o.stdio) || o.stdio === 'pipe')) N.write(2, r.stderr);
      if (r.status !== 0) throw cmdError(cmd, r, o.encoding);
      return outOf(r.stdout, o.encoding);
    },
    execFileSync(file, args, o) {
      if (!Array.isArray(args)) { o = args; args = []; }
      o = o || {};
      const r = N.spawnSync([file, ...args.map(String)], cpOpts(o));
      if (r.status !== 0) throw cmdError([file, ...args].join(' '), r, o.encoding);
      return outOf(r.stdout, o.encoding);
    },
    spawnSync(file, args, o) {
      if (!Array.isArray(args)) { o = args; args = []; }
      o = o || {};
      const argv = o.shell ? shArgs([file, ...args].join(' ')) : [file, ...args.map(String)];
      const r = N.spawnSync(argv, cpOpts(o));
      const stdout = outOf(r.stdout, o.encoding), stderr = outOf(r.stderr, o.encoding);
      return { pid: 0, status: r.status, signal: null, stdout, stderr, output: [null, stdout, stderr] };
    },
    spawn(file, args, o) {
      if (!Array.isArray(args)) { o = args; args = []; }
      o = o || {};
      const argv = o.shell ? shArgs([file, ...args].join(' ')) : [file, ...args.map(String)];
      return startChild(argv, o);
    },
    exec(cmd, o, cb) {
      if (typeof o === 'function') { cb = o; o = {}; }
      o = o || {};
      return collect(startChild(shArgs(cmd), o), cmd, o, cb);
    },
    execFile(file, args, o, cb) {
      if (typeof args === 'function') { cb = args; args = []; o = {}; }
      if (!Array.isArray(args)) { cb = o; o = args; args = []; }
      if (typeof o === 'function') { cb = o; o = {}; }
      o = o || {};
      return collect(startChild([file, ...args.map(String)], o), [file, ...args].join(' '), o, cb);
    },
    fork() { throw Object.assign(new Error('child_process.fork is not available in the sandbox'), { code: 'ENOSYS' }); },
  };
  function startChild(argv, o) {
    const child = new EventEmitter();
    const mk = () => {
      const s = new EventEmitter();
      s.setEncoding = (e) => { s._enc = e; return s; };
      s.pipe = (dest) => { s.on('data', (c) => dest.write(c)); return dest; };
      return s;
    };
    child.stdout = mk();
    child.stderr = mk();
    child.pid = 0;
    child.exitCode = null;
    child.signalCode = null;
    child.killed = false;
    const inherit = o.stdio === 'inherit';
    const h = N.spawn(argv, { cwd: o.cwd, env: o.env, input: o.input }, (fd, ab) => {
      if (inherit) { N.write(fd, ab); return; }
      const s = fd === 1 ? child.stdout : child.stderr;
      const b = B.from(ab);
      s.emit('data', s._enc ? b.toString(s._enc) : b);
    }, (status) => {
      child.exitCode = child.killed ? null : status;
      const sig = child.killed ? 'SIGTERM' : null;
      child.signalCode = sig;
      child.stdout.emit('end');
      child.stderr.emit('end');
      child.emit('exit', child.exitCode, sig);
      child.emit('close', child.exitCode, sig);
    });
    child.stdin = new EventEmitter();
    child.stdin.write = (d, enc, cb) => { h.write(typeof d === 'string' ? B.from(d, typeof enc === 'string' ? enc : 'utf8') : d); if (typeof enc === 'function') enc(); else if (cb) cb(); return true; };
    child.stdin.end = (d) => { if (d != null) child.stdin.write(d); h.end(); };
    if (o.input === undefined && !(o.stdio === 'pipe' || Array.isArray(o.stdio) && o.stdio[0] === 'pipe') && false) h.end();
    child.kill = () => { child.killed = true; h.kill(); return true; };
    child.ref = child.unref = () => child;
    return child;
  }
  function collect(child, cmdline, o, cb) {
    const out = [], err = [];
    child.stdout.on('data', (b) => out.push(B.from(b)));
    child.stderr.on('data', (b) => err.push(B.from(b)));
    child.stdin.end();
    child.on('close', (code) => {
      if (!cb) return;
      const enc = o.encoding === undefined ? 'utf8' : o.encoding;
      const so = outOf(B.concat(out), enc), se = outOf(B.concat(err), enc);
      if (code !== 0) {
        const e = new Error('Command failed: ' + cmdline + '\n' + B.concat(err).toString());
        e.code = code;
        e.killed = child.killed;
        e.signal = child.signalCode;
        e.cmd = cmdline;
        e.stdout = so;
        e.stderr = se;
        cb(e, so, se);
      } else cb(null, so, se);
    });
    return child;
  }
  child_process.exec[promisify.custom] = (cmd, o) => new Promise((resolve, reject) => {
    child_process.exec(cmd, o, (e, stdout, stderr) => (e ? reject(e) : resolve({ stdout, stderr })));
  });
  child_process.execFile[promisify.custom] = (f, a, o) => new Promise((resolve, reject) => {
    child_process.execFile(f, a || [], o || {}, (e, stdout, stderr) => (e ? reject(e) : resolve({ stdout, stderr })));
  });
  builtins.child_process = child_process;

  // ------------------------------------------------------------------ os
  builtins.os = {
    EOL: '\n',
    platform: () => 'linux',
    type: () => 'Linux',
    arch: () => 'x64',
    release: () => '6.0.0-agentfs',
    hostname: () => N.user.hostname || 'sandbox',
    homedir: () => process.env.HOME || '/',
    tmpdir: () => process.env.TMPDIR || '/tmp',
    userInfo: () => ({ username: N.user.name, uid: N.user.uid, gid: N.user.gid, homedir: process.env.HOME || '/', shell: '/bin/sh' }),
    cpus: () => [{ model: 'sandbox', speed: 0, times: { user: 0, nice: 0, sys: 0, idle: 0, irq: 0 } }],
    totalmem: () => 0,
    freemem: () => 0,
    uptime: () => 0,
    loadavg: () => [0, 0, 0],
    networkInterfaces: () => ({}),
    endianness: () => 'LE',
    availableParallelism: () => 1,
    constants: { signals: {}, errno: {} },
    devNull: '/dev/null',
  };

  // -------------------------------------------------------------- crypto
  class Hash {
    constructor(alg) { this.alg = alg; this.parts = []; N.hash(alg, ''); }
    update(d, enc) { this.parts.push(typeof d === 'string' ? B.from(d, enc || 'utf8') : B.from(d)); return this; }
    digest(enc) { const b = B.from(N.hash(this.alg, B.concat(this.parts))); return enc ? b.toString(enc) : b; }
    copy() { const h = new Hash(this.alg); h.parts = this.parts.slice(); return h; }
  }
  const randomUUID = () => {
    const b = B.from(N.randomBytes(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = b.toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  const getRandomValues = (a) => { const b = new Uint8Array(N.randomBytes(a.byteLength)); new Uint8Array(a.buffer, a.byteOffset, a.byteLength).set(b); return a; };
  builtins.crypto = {
    createHash: (alg) => new Hash(alg),
    randomBytes: (n, cb) => { const b = B.from(N.randomBytes(n)); if (cb) { setImmediate(() => cb(null, b)); return; } return b; },
    randomUUID,
    randomInt: (a, b) => { if (b === undefined) { b = a; a = 0; } return a + Math.floor(Math.random() * (b - a)); },
    getRandomValues,
    webcrypto: { getRandomValues, randomUUID },
    getHashes: () => ['md5', 'sha1', 'sha256', 'sha384', 'sha512'],
  };
  G.crypto = { getRandomValues, randomUUID };

  // -------------------------------------------------------------- assert
  class AssertionError extends Error {
    constructor(o) { super(o.message); this.name = 'AssertionError'; this.code = 'ERR_ASSERTION'; this.actual = o.actual; this.expected = o.expected; this.operator = o.operator; this.generatedMessage = !o.userMessage; }
  }
  const fail = (actual, expected, message, operator, def) => {
    if (message instanceof Error) throw message;
    throw new AssertionError({ message: message || def, actual, expected, operator, userMessage: !!message });
  };
  function assert(v, m) { if (!v) fail(v, true, m, '==', 'The expression evaluated to a falsy value:\n\n  assert(' + inspect(v) + ')\n'); }
  Object.assign(assert, {
    ok: (v, m) => { if (!v) fail(v, true, m, '==', 'The expression evaluated to a falsy value:\n\n  assert.ok(' + inspect(v) + ')\n'); },
    equal: (a, b, m) => { if (!(a == b)) fail(a, b, m, '==', `${inspect(a)} == ${inspect(b)}`); },
    notEqual: (a, b, m) => { if (a == b) fail(a, b, m, '!=', `${inspect(a)} != ${inspect(b)}`); },
    strictEqual: (a, b, m) => { if (!Object.is(a, b)) fail(a, b, m, 'strictEqual', `Expected values to be strictly equal:\n\n${inspect(a)} !== ${inspect(b)}\n`); },
    notStrictEqual: (a, b, m) => { if (Object.is(a, b)) fail(a, b, m, 'notStrictEqual', `Expected "actual" to be strictly unequal to: ${inspect(b)}`); },
    deepStrictEqual: (a, b, m) => { if (!isDeepStrictEqual(a, b)) fail(a, b, m, 'deepStrictEqual', `Expected values to be strictly deep-equal:\n${inspect(a)}\n\nshould equal\n\n${inspect(b)}`); },
    deepEqual: (a, b, m) => { if (!isDeepStrictEqual(a, b) && JSON.stringify(a) !== JSON.stringify(b)) fail(a, b, m, 'deepEqual', `Expected values to be loosely deep-equal:\n\n${inspect(a)}\n\nshould loosely deep-equal\n\n${inspect(b)}`); },
    notDeepStrictEqual: (a, b, m) => { if (isDeepStrictEqual(a, b)) fail(a, b, m, 'notDeepStrictEqual', 'Expected "actual" not to be strictly deep-equal to: ' + inspect(b)); },
    throws: (fn, exp, m) => {
      try { fn(); } catch (e) {
        if (typeof exp === 'function' && exp.prototype !== undefined && !(e instanceof exp)) throw e;
        if (exp instanceof RegExp && !exp.test(String(e && e.message !== undefined ? e : e))) fail(e, exp, m, 'throws', 'The error message does not match');
        return;
      }
      fail(undefined, exp, typeof exp === 'string' ? exp : m, 'throws', 'Missing expected exception.');
    },
    doesNotThrow: (fn) => { fn(); },
    rejects: async (p, exp, m) => {
      try { await (typeof p === 'function' ? p() : p); } catch (e) { return; }
      fail(undefined, exp, m, 'rejects', 'Missing expected rejection.');
    },
    match: (s, re, m) => { if (!re.test(s)) fail(s, re, m, 'match', `The input did not match the regular expression ${re}. Input:\n\n${inspect(s)}\n`); },
    fail: (m) => fail(undefined, undefined, m, 'fail', 'Failed'),
    AssertionError,
  });
  assert.strict = assert;
  builtins.assert = assert;
  builtins['assert/strict'] = assert;

  // ----------------------------------------------------------------- url
  const urlMod = N.urlModule;
  builtins.url = {
    URL, URLSearchParams,
    fileURLToPath: (u) => { const x = typeof u === 'string' ? new URL(u) : u; if (x.protocol !== 'file:') { const e = new TypeError('The URL must be of scheme file'); e.code = 'ERR_INVALID_URL_SCHEME'; throw e; } return decodeURIComponent(x.pathname); },
    pathToFileURL: (p) => new URL('file://' + encodeURI(path.resolve(p))),
    parse: (s) => { const u = new URL(s); return { protocol: u.protocol, host: u.host, hostname: u.hostname, port: u.port, pathname: u.pathname, search: u.search, query: u.search.slice(1), hash: u.hash, href: u.href }; },
    format: (u) => (typeof u === 'string' ? u : u.href || String(u)),
    domainToASCII: urlMod.domainToASCII,
    domainToUnicode: urlMod.domainToUnicode,
  };

  // ----------------------------------------------------- string_decoder
  builtins.string_decoder = {
    StringDecoder: class {
      constructor(enc = 'utf8') { this.enc = enc; this.rest = B.alloc(0); }
      write(b) {
        let buf = B.concat([this.rest, B.from(b)]);
        let end = buf.length;
        if (this.enc === 'utf8' || this.enc === 'utf-8') {
          // Keep an incomplete trailing sequence for the next write.
          let i = end - 1, k = 0;
          while (i >= 0 && k < 4 && (buf[i] & 0xc0) === 0x80) { i--; k++; }
          if (i >= 0) {
            const c = buf[i];
            const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
            if (need > k + 1) end = i;
          }
        }
        this.rest = buf.slice(end);
        return buf.slice(0, end).toString(this.enc);
      }
      end(b) { const s = b ? this.write(b) : ''; const r = this.rest.toString(this.enc); this.rest = B.alloc(0); return s + r; }
    },
  };

  // ---------------------------------------------------------------- fetch
  class Headers {
    constructor(init) {
      this._h = new Map();
      if (init instanceof Headers) init.forEach((v, k) => this.append(k, v));
      else if (Array.isArray(init)) for (const [k, v] of init) this.append(k, v);
      else if (init) for (const k of Object.keys(init)) this.append(k, init[k]);
    }
    append(k, v) { k = String(k).toLowerCase(); const o = this._h.get(k); this._h.set(k, o === undefined ? String(v) : o + ', ' + v); }
    set(k, v) { this._h.set(String(k).toLowerCase(), String(v)); }
    get(k) { const v = this._h.get(String(k).toLowerCase()); return v === undefined ? null : v; }
    has(k) { return this._h.has(String(k).toLowerCase()); }
    delete(k) { this._h.delete(String(k).toLowerCase()); }
    forEach(fn) { for (const [k, v] of [...this._h].sort()) fn(v, k, this); }
    *entries() { yield* [...this._h].sort(); }
    *keys() { for (const [k] of this.entries()) yield k; }
    *values() { for (const [, v] of this.entries()) yield v; }
    [Symbol.iterator]() { return this.entries(); }
  }
  class Response {
    constructor(body, init) {
      init = init || {};
      this._body = body == null ? B.alloc(0) : typeof body === 'string' ? B.from(body) : B.from(body);
      this.status = init.status === undefined ? 200 : init.status;
      this.statusText = init.statusText || '';
      this.headers = new Headers(init.headers);
      this.ok = this.status >= 200 && this.status < 300;
      this.url = init.url || '';
      this.redirected = !!init.redirected;
      this.bodyUsed = false;
      this.type = 'basic';
    }
    _take() {
      if (this.bodyUsed) return Promise.reject(new TypeError('Body is unusable: Body has already been read'));
      this.bodyUsed = true;
      return Promise.resolve(this._body);
    }
    text() { return this._take().then((b) => N.utf8Decode(b)); }
    json() { return this.text().then((t) => JSON.parse(t)); }
    arrayBuffer() { return this._take().then((b) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)); }
    bytes() { return this._take().then((b) => new Uint8Array(b)); }
    blob() { return this._take().then((b) => ({ size: b.length, type: this.headers.get('content-type') || '', text: async () => b.toString(), arrayBuffer: async () => b.buffer })); }
    clone() { return new Response(this._body, { status: this.status, statusText: this.statusText, headers: this.headers, url: this.url }); }
    static json(v, init) { return new Response(JSON.stringify(v), Object.assign({ headers: { 'content-type': 'application/json' } }, init)); }
  }
  class Request {
    constructor(input, init) {
      init = init || {};
      this.url = input instanceof Request ? input.url : String(input);
      this.method = (init.method || (input instanceof Request ? input.method : 'GET')).toUpperCase();
      this.headers = new Headers(init.headers || (input instanceof Request ? input.headers : undefined));
      this.body = init.body !== undefined ? init.body : input instanceof Request ? input.body : null;
    }
  }
  function fetch(input, init) {
    return new Promise((resolve, reject) => {
      const req = new Request(input, init);
      let body = req.body;
      if (body != null && typeof body !== 'string' && !(body instanceof Uint8Array) && !(body instanceof ArrayBuffer)) {
        if (body instanceof URLSearchParams) { body = body.toString(); if (!req.headers.has('content-type')) req.headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8'); }
        else body = String(body);
      }
      if (typeof body === 'string' && !req.headers.has('content-type')) req.headers.set('content-type', 'text/plain;charset=UTF-8');
      N.fetch(req.method, req.url, [...req.headers.entries()], body == null ? undefined : body, (err, r) => {
        if (err) {
          const e = new TypeError('fetch failed');
          e.cause = Object.assign(new Error(err), { code: /sandbox network policy/.test(err) ? 'EACCES' : 'ECONNREFUSED' });
          reject(e);
          return;
        }
        resolve(new Response(r.body, { status: r.status, statusText: r.statusText, headers: r.headers, url: r.url, redirected: r.redirected }));
      });
    });
  }

  // ------------------------------------------------------------- console
  const counts = new Map(), timersStart = new Map();
  let groupIndent = '';
  const out = (fd) => (...a) => {
    let s = format(...a);
    if (groupIndent) s = groupIndent + s.split('\n').join('\n' + groupIndent);
    N.write(fd, s + '\n');
  };
  const console = {
    log: out(1), info: out(1), debug: out(1),
    error: out(2), warn: out(2),
    trace: (...a) => out(2)('Trace' + (a.length ? ': ' + format(...a) : '')),
    dir: (v, o) => N.write(1, inspect(v, o) + '\n'),
    dirxml: out(1),
    assert: (v, ...a) => { if (!v) out(2)('Assertion failed' + (a.length ? ': ' + format(...a) : '')); },
    count: (l = 'default') => { const n = (counts.get(l) || 0) + 1; counts.set(l, n); out(1)(`${l}: ${n}`); },
    countReset: (l = 'default') => counts.delete(l),
    time: (l = 'default') => timersStart.set(l, N.hrtime()),
    timeEnd: (l = 'default') => { const t = timersStart.get(l); if (t !== undefined) { out(1)(`${l}: ${((N.hrtime() - t) / 1e6).toFixed(3)}ms`); timersStart.delete(l); } },
    timeLog: (l = 'default', ...a) => { const t = timersStart.get(l); if (t !== undefined) out(1)(`${l}: ${((N.hrtime() - t) / 1e6).toFixed(3)}ms`, ...a); },
    group: (...a) => { if (a.length) out(1)(...a); groupIndent += '  '; },
    groupCollapsed: (...a) => { if (a.length) out(1)(...a); groupIndent += '  '; },
    groupEnd: () => { groupIndent = groupIndent.slice(2); },
    table: (d) => out(1)(d),
  };
  builtins.console = console;

  // ----------------------------------------------------------- globals
  Object.assign(G, {
    console, process, setTimeout: timers.setTimeout, setInterval: timers.setInterval,
    clearTimeout: timers.clearTimeout, clearInterval: timers.clearInterval,
    setImmediate: timers.setImmediate, clearImmediate: timers.clearImmediate,
    queueMicrotask: (fn) => { Promise.resolve().then(fn); },
    structuredClone: (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v))),
    TextEncoder, TextDecoder, fetch, Headers, Response, Request,
    global: G,
    performance: { now: () => N.hrtime() / 1e6, timeOrigin: N.now(), mark() {}, measure() {} },
  });
  G.AbortController = class AbortController {
    constructor() { this.signal = new EventEmitter(); this.signal.aborted = false; this.signal.addEventListener = (n, f) => this.signal.on(n, f); this.signal.removeEventListener = (n, f) => this.signal.off(n, f); this.signal.throwIfAborted = () => { if (this.signal.aborted) throw this.signal.reason; }; }
    abort(reason) { if (this.signal.aborted) return; this.signal.aborted = true; this.signal.reason = reason || Object.assign(new Error('This operation was aborted'), { name: 'AbortError' }); this.signal.emit('abort'); }
  };
  builtins.module = { builtinModules: Object.keys(builtins), createRequire: (f) => (spec) => N.require(spec, String(f).replace(/^file:\/\//, '')) };
  builtins.perf_hooks = { performance: G.performance };
  builtins.worker_threads = { isMainThread: true, parentPort: null, workerData: null };
  builtins.readline = {
    createInterface(o) {
      const rl = new EventEmitter();
      const input = o && o.input;
      rl.close = () => rl.emit('close');
      rl.question = (q, cb) => { N.write(1, q); };
      rl.setPrompt = () => {};
      rl.prompt = () => {};
      const lines = () => {
        const text = input === process.stdin || !input ? B.from(N.fs.readFile(0)).toString() : '';
        const ls = text.split('\n');
        if (ls[ls.length - 1] === '') ls.pop();
        return ls;
      };
      rl[Symbol.asyncIterator] = () => asyncIter(lines);
      setImmediate(() => { for (const l of lines()) rl.emit('line', l); rl.emit('close'); });
      return rl;
    },
  };

  return { builtins, runTask, emitExit };
})
