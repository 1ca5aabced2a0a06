export const greet = (n) => `hello, ${n}`;
export default function twice(x) { return x * 2; }
