// Staging a plugin package the way npm would publish it (for `plugins install -l`).

import fs from "node:fs";
import path from "node:path";

/**
 * The files of a plugin package as npm would publish them (package.json, openclaw.plugin.json and
 * what package.json#files lists: exact paths, directories, `dir/*.ext` globs), relative to `src`,
 * sorted. Throws when the build output is missing.
 */
export function packageFiles(src) {
  const pkg = JSON.parse(fs.readFileSync(path.join(src, "package.json"), "utf8"));
  const patterns = ["package.json", "openclaw.plugin.json", ...(pkg.files ?? [])];
  for (const ext of pkg.openclaw?.extensions ?? []) patterns.push(ext.replace(/^\.\//, ""));
  const out = new Set();
  const walk = (rel) => {
    const abs = path.join(src, rel);
    if (fs.statSync(abs).isDirectory()) for (const n of fs.readdirSync(abs)) walk(path.join(rel, n));
    else out.add(rel);
  };
  const missing = [];
  for (const pat of patterns) {
    const clean = pat.replace(/^\.\//, "").replace(/\/$/, "");
    if (!clean.includes("*")) {
      if (fs.existsSync(path.join(src, clean))) walk(clean);
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
    for (const n of hits) walk(path.join(dir, n));
  }
  if (missing.some((m) => /\.wasm$|index\.js$|openclaw\.plugin\.json$/.test(m))) {
    throw new Error(`plugin at ${src} is incomplete (missing ${missing.join(", ")}); build it first (wasm-pack: .ci/build)`);
  }
  return [...out].sort();
}

/** Copy a plugin package's published files (packageFiles) into `dest`. Returns `dest`. */
export function stagePlugin(src, dest) {
  for (const rel of packageFiles(src)) {
    fs.mkdirSync(path.dirname(path.join(dest, rel)), { recursive: true });
    fs.copyFileSync(path.join(src, rel), path.join(dest, rel));
  }
  return dest;
}
