// The plugin config as the user wrote it → the config the core runs on. Every valid key is kept:
// an unknown key gets a "did you mean", a value the core refuses is reported (key, value, what
// is allowed) and left at its default. The core fills in the profile's knobs (`applyProfile`)
// and judges each value (`parseConfig`); this module only walks the object and words the
// problems.
import { readFileSync } from "node:fs";
import { cachefoldStateDir } from "./host/openclaw.js";

let manifest;
/** The plugin's manifest (openclaw.plugin.json beside js/), read once; null when unreadable. */
export function pluginManifest() {
  if (manifest === undefined) {
    try {
      manifest = JSON.parse(readFileSync(new URL("../openclaw.plugin.json", import.meta.url), "utf8"));
    } catch {
      manifest = null;
    }
  }
  return manifest;
}

const configSchema = () => pluginManifest()?.configSchema ?? null;

function schemaAt(path) {
  let s = configSchema();
  for (const k of path) {
    if (!s) return null;
    s = s.properties?.[k] ?? (typeof s.additionalProperties === "object" ? s.additionalProperties : null);
  }
  return s;
}

export function show(v) {
  const text = v === undefined ? "undefined" : JSON.stringify(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** What a config key accepts, from the manifest schema (the core's ranges are in its message). */
export function allowedFor(path) {
  const s = schemaAt(path);
  if (!s) {
    const parent = path.length > 1 ? schemaAt(path.slice(0, -1)) : configSchema();
    const keys = Object.keys(parent?.properties ?? {});
    return keys.length ? `one of the keys ${keys.join(", ")}` : "no such key";
  }
  const parts = [];
  if (s.enum) parts.push(`one of ${s.enum.map((e) => JSON.stringify(e)).join(", ")}`);
  else {
    const types = [s.type ?? "any"].flat();
    const numeric = types.includes("integer") || types.includes("number");
    parts.push(numeric ? `${types.includes("integer") ? "an integer" : "a number"} (or the same as a string)` : types.map((t) => (t === "array" ? `an array of ${s.items?.type ?? "values"}s` : `a ${t}`)).join(" or "));
  }
  if (s.minimum != null && s.maximum != null) parts.push(`from ${s.minimum} to ${s.maximum}`);
  else if (s.minimum != null) parts.push(`at least ${s.minimum}`);
  else if (s.maximum != null) parts.push(`at most ${s.maximum}`);
  const range = /\(([^()]*[<>=][^()]*)\)/.exec(s.description ?? "");
  if (range) parts.push(range[1]);
  return parts.join(", ");
}

function reasonOf(err) {
  return String(err?.message ?? err).replace(/^invalid config `[^`]*`: /, "");
}

const isObj = (v) => v != null && typeof v === "object" && !Array.isArray(v);

/** Levenshtein distance (small strings: config keys). */
function editDistance(a, b) {
  const m = a.length;
  const n = b.length;
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  for (let i = 1; i <= m; i++) {
    const cur = [i];
    for (let j = 1; j <= n; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[n];
}

/** The valid key nearest to `key` (case-insensitive edit distance, dotted keys included), or null. */
function nearestKey(key, candidates) {
  const k = key.toLowerCase();
  let best = null;
  let bestD = Infinity;
  for (const c of candidates) {
    const leaf = c.split(".").pop().toLowerCase();
    const d = Math.min(editDistance(k, c.toLowerCase()), editDistance(k, leaf) + 1);
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best && bestD <= Math.max(3, Math.floor(key.length / 2)) ? best : null;
}

function allKeys() {
  const out = [];
  const walk = (props, prefix) => {
    for (const [k, v] of Object.entries(props ?? {})) {
      out.push(prefix + k);
      if (v.properties) walk(v.properties, `${prefix}${k}.`);
    }
  };
  walk(configSchema()?.properties, "");
  return out;
}

/**
 * Drop keys the schema does not know (top level and inside summary/persist/artifacts/lessons),
 * each reported with the nearest valid key. Returns the cleaned copy.
 */
function dropUnknownKeys(raw, problems) {
  const keys = allKeys();
  const props = configSchema()?.properties;
  if (!props) return raw;
  const clean = {};
  const unknown = (path, value) => {
    const key = path.join(".");
    const near = nearestKey(key, keys.filter((k) => k.split(".").length <= path.length + 1));
    problems.push({
      key,
      value,
      unknown: true,
      nearest: near,
      message: `cachefold config: unknown key ${key} = ${show(value)}${near ? ` (did you mean ${near}?)` : ""}; allowed: ${allowedFor(path)}. It is ignored and every other key is kept; remove it with openclaw config unset plugins.entries.cachefold.config.${key}`,
    });
  };
  for (const [k, v] of Object.entries(raw)) {
    const s = props[k];
    if (!s) {
      unknown([k], v);
      continue;
    }
    if (s.properties && isObj(v)) {
      const sub = {};
      for (const [k2, v2] of Object.entries(v)) {
        if (s.properties[k2]) sub[k2] = v2;
        else unknown([k, k2], v2);
      }
      clean[k] = sub;
    } else clean[k] = v;
  }
  return clean;
}

const keyOf = (err) => /^invalid config `([^`]*)`/.exec(String(err?.message ?? ""))?.[1] ?? null;
const valueAt = (obj, key) => key.split(".").reduce((v, k) => (isObj(v) ? v[k] : undefined), obj);

/**
 * Parse the plugin config keeping every valid key: keys (and keys of the nested objects and
 * maps) are added one at a time and a value the core rejects is left out, so its default
 * applies. Returns {config, problems: [{key, value, message}]}; each message names the key the
 * core refused (`persist.thresholds.read`, `prices.x.miss`), the value and what is allowed. An
 * invalid `mode` means "off" (the safe reading of a mistyped mode).
 */
export function resolveConfig(core, input) {
  let raw = input;
  const problems = [];
  let defaults;
  const report = (path, value, err, trial) => {
    let key = path.join(".");
    let reason = reasonOf(err);
    const named = keyOf(err);
    if (named && named.startsWith(`${key}.`)) {
      // The core names a key inside this value (a price row's field): report that one.
      value = valueAt(trial, named);
      path = named.split(".");
      key = named;
    } else if (named && named !== key) {
      // A rule between two keys, worded by the core for the other one ("X must be at least
      // <this key> (n)"): say which key this one must stay within.
      defaults ??= core.parseConfig("{}");
      const other = valueAt(trial, named) ?? valueAt(defaults, named);
      reason = reason.startsWith(`must be at least ${key}`) ? `must be at most ${named} (${show(other)})` : `${named} = ${show(other)} ${reason}`;
    }
    const fallback = key === "mode" ? ' "off" (passthrough) until it is fixed' : " its default";
    problems.push({
      key,
      value,
      message: `cachefold config: ${key} = ${show(value)} is not valid (${reason}); allowed: ${allowedFor(path)}. Using${fallback}; every other key is kept.`,
    });
  };
  const tryParse = (obj) => {
    try {
      return { config: core.parseConfig(JSON.stringify(obj)) };
    } catch (err) {
      return { err };
    }
  };
  if (!isObj(raw)) {
    if (raw != null) report(["(plugin config)"], raw, new Error("the plugin config must be an object"), {});
    raw = {};
  }
  // The profile's knobs where the user set none (the core's rule; an unknown profile is
  // reported below, with the balanced knobs meanwhile).
  raw = core.applyProfile(JSON.stringify(dropUnknownKeys(raw, problems)));
  const whole = tryParse(raw);
  if (whole.config) return { config: whole.config, problems };
  let modeBad = false;
  // The valid part of `obj` at `path`; `wrap(sub)` is the whole config with `sub` there. An
  // object whose keys are free (a section, a map such as persist.thresholds) is kept key by key;
  // a record with required fields (a price row) stays whole or goes. A key refused on the first
  // pass is tried again once every other key is in: a rule between two keys (a threshold and
  // the preview) is then judged against the user's values.
  const keepValid = (path, obj, wrap) => {
    const sub = {};
    const later = Object.entries(obj).filter(([k, v]) => {
      if (!tryParse(wrap({ ...sub, [k]: v })).config) return true;
      sub[k] = v;
      return false;
    });
    for (const [k, v] of later) {
      const here = [...path, k];
      const trial = wrap({ ...sub, [k]: v });
      const t = tryParse(trial);
      if (t.config) {
        sub[k] = v;
        continue;
      }
      const s = schemaAt(here);
      if (isObj(v) && s?.type === "object" && !s.required) {
        const inner = keepValid(here, v, (x) => wrap({ ...sub, [k]: x }));
        if (tryParse(wrap({ ...sub, [k]: inner })).config) sub[k] = inner;
        continue;
      }
      if (here.join(".") === "mode") modeBad = true;
      report(here, v, t.err, trial);
    }
    return sub;
  };
  const good = keepValid([], raw, (x) => x);
  if (modeBad) good.mode = "off";
  const final = tryParse(good);
  return { config: final.config ?? core.parseConfig("{}"), problems };
}

/**
 * The context the engine, hooks, tools and commands share: the resolved config (as object and
 * JSON), its problems and the state dir; `log` drops everything until index.js sets the log file.
 */
export function configContext(core, raw, logger = console) {
  const { config, problems } = resolveConfig(core, raw ?? {});
  return { config, configJson: JSON.stringify(config), configProblems: problems, stateDir: cachefoldStateDir(config), logger, log: () => {} };
}
