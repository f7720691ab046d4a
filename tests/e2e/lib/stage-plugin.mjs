// Staging a plugin package the way npm would publish it (for `plugins install -l`).

import fs from "node:fs";
import path from "node:path";

/**
 * Copy a plugin package (package.json, openclaw.plugin.json and what package.json#files lists:
 * exact paths, directories, `dir/*.ext` globs) into `dest`. Returns `dest`.
 */
export function stagePlugin(src, dest) {
  const pkg = JSON.parse(fs.readFileSync(path.join(src, "package.json"), "utf8"));
  const patterns = ["package.json", "openclaw.plugin.json", ...(pkg.files ?? [])];
  for (const ext of pkg.openclaw?.extensions ?? []) patterns.push(ext.replace(/^\.\//, ""));
  const copy = (rel) => {
    const from = path.join(src, rel);
    const to = path.join(dest, rel);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.cpSync(from, to, { recursive: true });
  };
  const missing = [];
  for (const pat of patterns) {
    const clean = pat.replace(/^\.\//, "").replace(/\/$/, "");
    if (!clean.includes("*")) {
      if (fs.existsSync(path.join(src, clean))) copy(clean);
      else missing.push(clean);
      continue;
    }
    const dir = path.dirname(clean);
    const re = new RegExp(`^${path.basename(clean).replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`);
    let names = [];
    try {
      names = fs.readdirSync(path.join(src, dir));
    } catch {}
    const hits = names.filter((n) => re.test(n));
    if (hits.length === 0) missing.push(clean);
    for (const n of hits) copy(path.join(dir, n));
  }
  if (missing.some((m) => /\.wasm$|index\.js$|openclaw\.plugin\.json$/.test(m))) {
    throw new Error(`plugin at ${src} is incomplete (missing ${missing.join(", ")}); build it first (wasm-pack: .ci/build)`);
  }
  return dest;
}
