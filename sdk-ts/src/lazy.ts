// lazy(build) returns a stand-in for the object build() makes, built at
// the stand-in's first property access (lazydesc.ts, lazyboot.ts). Until
// then the stand-in's prototype is a Proxy that builds the object and
// makes it the stand-in's prototype; from then on every property read is
// an ordinary prototype lookup. This module imports nothing, so that the
// protobuf-es modules it is spliced into never form an import cycle.
export function lazy<T extends object>(build: () => T): T {
  let real: T | undefined;
  const resolve = (): T => {
    if (real === undefined) {
      real = build();
      Object.setPrototypeOf(standIn, real);
    }
    return real;
  };
  const pending = new Proxy(Object.create(null) as object, {
    get: (_t, key, receiver) => Reflect.get(resolve(), key, receiver),
    has: (_t, key) => key in resolve(),
    set: (_t, key, value, receiver) => Reflect.set(resolve(), key, value, receiver),
  });
  const standIn = Object.create(pending) as T;
  return standIn;
}
