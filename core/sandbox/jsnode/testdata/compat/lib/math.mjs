export const add = (a, b) => a + b;
export function mul(a, b) { return a * b; }
export default { name: 'math' };
