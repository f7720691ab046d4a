// The plugin installed once per run and copied into every OpenClaw the run starts.
//
// `openclaw plugins install npm-pack:<tgz> --force --accept-capabilities` (the README's route)
// takes 10-40 s: it unpacks the tarball into `<state>/npm/projects/cachefold`, runs `npm install`
// for its dependencies and records the install (paths, manifest, accepted capabilities) in
// `<state>/state/openclaw.sqlite` (`config_machine_state`, key `plugins.installedIndex`). So the
// run installs once into a template state, keyed by a hash of the files npm would publish (their
// paths and bytes; no `npm pack` when the template exists), and each harness copies the template's
// `npm/` and `state/` directories into its own state dir and rewrites the template's state path
// in that one record. A harness whose checks touch the installed copy itself (cli.test edits the
// installed manifest) installs on its own (`install: "pack-fresh"`).
//
// Templates live under <tmpdir>/cachefold-e2e-installs/<hash>; one is published by an atomic
// rename, so files running side by side never see a half-built one; templates not used for a day,
// and all but the four used last, are removed.

import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { run } from "./env.mjs";
import { packageFiles } from "./stage-plugin.mjs";

const ROOT = path.join(os.tmpdir(), "cachefold-e2e-installs");
const INDEX_KEY = "plugins.installedIndex";
const MAX_TEMPLATES = 4;

/** `npm pack` of the plugin checkout into `dest`; returns the tarball path. */
export function npmPack(pluginDir, dest) {
  fs.mkdirSync(dest, { recursive: true });
  const out = execFileSync("npm", ["pack", "--pack-destination", dest, "--ignore-scripts", "--silent"], { cwd: pluginDir, encoding: "utf8", timeout: 120_000 });
  return path.join(dest, out.trim().split("\n").pop());
}

/**
 * The template for `pluginDir`'s current files, built if missing. `oc(args, {env, cwd})` runs the
 * OpenClaw CLI; `baseEnv(dirs)` gives the isolated environment for a state dir.
 * Returns {dir, state, tarball, built: boolean, ms}.
 */
export async function pluginTemplate({ pluginDir, tc, baseEnv, log = () => {} }) {
  const t0 = Date.now();
  fs.mkdirSync(ROOT, { recursive: true });
  const h = crypto.createHash("sha256");
  for (const rel of packageFiles(pluginDir)) h.update(`${rel}\0`).update(fs.readFileSync(path.join(pluginDir, rel))).update("\0");
  const hash = h.digest("hex").slice(0, 20);
  const dir = path.join(ROOT, hash);
  const ready = path.join(dir, "ready.json");
  if (fs.existsSync(ready)) {
    touch(dir);
    return { ...JSON.parse(fs.readFileSync(ready, "utf8")), dir, built: false, ms: Date.now() - t0 };
  }
  prune(hash);
  const packDir = fs.mkdtempSync(path.join(ROOT, "pack-"));
  const tgz = npmPack(pluginDir, packDir);
  const tmp = fs.mkdtempSync(path.join(ROOT, `${hash}.building-`));
  const dirs = { home: path.join(tmp, "home"), state: path.join(tmp, "state"), work: path.join(tmp, "work"), tmp: path.join(tmp, "tmp") };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  const configPath = path.join(dirs.state, "openclaw.json");
  fs.writeFileSync(configPath, JSON.stringify({ agents: { defaults: { workspace: dirs.work } } }, null, 2));
  const tarball = path.join(tmp, path.basename(tgz));
  fs.renameSync(tgz, tarball);
  fs.rmSync(packDir, { recursive: true, force: true });
  const env = baseEnv({ ...dirs, configPath });
  const oc = async (args) => {
    const r = await run(tc.node, [tc.openclaw, ...args], { env, cwd: dirs.work, timeoutMs: 10 * 60_000 });
    if (r.code !== 0) throw new Error(`template install: openclaw ${args.join(" ")} failed (exit ${r.code}${r.timedOut ? ", timed out" : ""})\n${r.stderr.slice(-3000)}\n${r.stdout.slice(-2000)}`);
    return r;
  };
  await oc(["plugins", "install", `npm-pack:${tarball}`, "--force", "--accept-capabilities"]);
  // The README's explicit enablement (install already sets it; setting it again must be accepted).
  await oc(["config", "set", "plugins.entries.cachefold.enabled", "true", "--strict-json"]);
  const info = { state: dirs.state, tarball: path.join(dir, path.basename(tgz)), hash };
  fs.writeFileSync(path.join(tmp, "ready.json"), JSON.stringify(info, null, 2));
  try {
    fs.renameSync(tmp, dir);
  } catch (e) {
    // Another file of this run published the same template first: use that one.
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(ready)) throw e;
    return { ...JSON.parse(fs.readFileSync(ready, "utf8")), dir, built: false, ms: Date.now() - t0 };
  }
  log(`plugin template ${hash}: npm-pack install in ${Date.now() - t0} ms`);
  return { ...info, dir, built: true, ms: Date.now() - t0 };
}

/**
 * Copy a template's install into `state` (an empty OpenClaw state dir): the installed package and
 * the install record, with the template's state path replaced by `state`.
 */
export async function adoptTemplate(tpl, state) {
  const from = path.join(tpl.dir, "state");
  for (const sub of ["npm", "state"]) fs.cpSync(path.join(from, sub), path.join(state, sub), { recursive: true });
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(path.join(state, "state", "openclaw.sqlite"));
  try {
    const row = db.prepare("SELECT value_json FROM config_machine_state WHERE state_key = ?").get(INDEX_KEY);
    if (!row) throw new Error(`template ${tpl.dir}: no ${INDEX_KEY} record (OpenClaw's state layout changed?)`);
    db.prepare("UPDATE config_machine_state SET value_json = ? WHERE state_key = ?").run(row.value_json.split(tpl.state).join(state), INDEX_KEY);
    // Records about the template's own config file, which this state does not have.
    for (const t of ["config_health_entries", "diagnostic_events"]) db.exec(`DELETE FROM ${t}`);
  } finally {
    db.close();
  }
  return path.join(state, "npm", "projects", "cachefold", "node_modules", "cachefold");
}

function touch(dir) {
  const now = new Date();
  try {
    fs.utimesSync(dir, now, now);
  } catch {}
}

/** Remove other templates not used for a day (and abandoned half-built ones), and all but the latest few. */
function prune(keep) {
  const dayAgo = Date.now() - 24 * 3600_000;
  const kept = [];
  for (const name of fs.readdirSync(ROOT)) {
    if (name === keep) continue;
    const p = path.join(ROOT, name);
    try {
      const { mtimeMs } = fs.statSync(p);
      if (mtimeMs < dayAgo) fs.rmSync(p, { recursive: true, force: true });
      else if (/^[0-9a-f]{20}$/.test(name)) kept.push({ p, mtimeMs });
    } catch {}
  }
  // Each template is ~64 MB and every edit of a packed file makes a new one: beside the one being
  // built, only the MAX_TEMPLATES - 1 used last stay (a file running side by side uses its own).
  kept.sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const { p } of kept.slice(MAX_TEMPLATES - 1)) fs.rmSync(p, { recursive: true, force: true });
}
