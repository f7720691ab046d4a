// Where the bytes of a wasm module go: section sizes, and (when the module still has its name
// section) code bytes per crate/module path and the largest functions.
// Usage: node .ci/wasm-size.mjs [pkg/cachefold_bg.wasm] [--top N]
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args[topAt + 1]) : 25;
const file = args.find((a, i) => !a.startsWith('--') && (topAt < 0 || i !== topAt + 1)) ?? 'pkg/cachefold_bg.wasm';
const buf = readFileSync(file);

let pos = 8;
function leb() {
  let result = 0, shift = 0, b;
  do { b = buf[pos++]; result += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
  return result;
}
const NAMES = ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start', 'element', 'code', 'data', 'datacount'];
const sections = [];
let code = null, names = null, importedFns = 0;
while (pos < buf.length) {
  const id = buf[pos++];
  const size = leb();
  const start = pos;
  let label = NAMES[id] ?? `id${id}`;
  if (id === 0) {
    const n = leb();
    label = `custom:${buf.subarray(pos, pos + n).toString()}`;
    if (label === 'custom:name') names = { start: pos + n, end: start + size };
  }
  if (id === 2) {
    const count = leb();
    for (let i = 0; i < count; i++) {
      const m = leb(); pos += m; const f = leb(); pos += f;
      const kind = buf[pos++];
      if (kind === 0) { leb(); importedFns++; }
      else if (kind === 1) { pos++; const fl = leb(); leb(); if (fl & 1) leb(); }
      else if (kind === 2) { const fl = leb(); leb(); if (fl & 1) leb(); }
      else if (kind === 3) { pos += 2; }
    }
  }
  if (id === 10) code = { start, end: start + size };
  sections.push([label, size]);
  pos = start + size;
}
console.log(`${file}: ${buf.length} bytes`);
for (const [l, s] of sections.sort((a, b) => b[1] - a[1])) console.log(`  ${l.padEnd(28)} ${String(s).padStart(9)}`);

if (code) {
  pos = code.start;
  const count = leb();
  const sizes = [];
  for (let i = 0; i < count; i++) { const s = leb(); sizes.push(s); pos += s; }
  const fnNames = new Map();
  if (names) {
    pos = names.start;
    while (pos < names.end) {
      const sub = buf[pos++]; const len = leb(); const end = pos + len;
      if (sub === 1) {
        const n = leb();
        for (let i = 0; i < n; i++) { const idx = leb(); const l = leb(); fnNames.set(idx, buf.subarray(pos, pos + l).toString()); pos += l; }
      }
      pos = end;
    }
  }
  if (fnNames.size === 0) { console.log('(no name section: per-function sizes unavailable)'); process.exit(0); }
  const demangle = (n) => n.replace(/::h[0-9a-f]{16}$/, '');
  const groups = new Map();
  const fns = sizes.map((s, i) => [demangle(fnNames.get(i + importedFns) ?? `#${i}`), s]);
  for (const [n, s] of fns) {
    const clean = n.replace(/^_?<+/, '').replace(/^&/, '');
    const parts = clean.split('::');
    const key = parts.slice(0, parts[0] === 'cachefold' || parts[0] === 'serde_json' || parts[0] === 'core' || parts[0] === 'alloc' ? 2 : 1).join('::').slice(0, 60);
    groups.set(key, (groups.get(key) ?? 0) + s);
  }
  console.log(`\ncode bytes by module (top ${top}):`);
  for (const [k, s] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${String(s).padStart(8)}  ${k}`);
  console.log(`\nlargest functions (top ${top}):`);
  for (const [n, s] of fns.sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${String(s).padStart(8)}  ${n.slice(0, 140)}`);
}
