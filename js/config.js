// The plugin config as the user wrote it → the config the core runs on. Every valid key is kept:
// an unknown key gets a "did you mean", a value the core refuses is reported (key, value, what
// is allowed) and left at its default, a profile fills the keys the user did not set. The core
// (`parseConfig`) is the judge of each value; this module only walks the object and words the
// problems.
import { readFileSync } from "node:fs";

let schemaCache;
function configSchema() {
  if (schemaCache === undefined) {
    try {
      schemaCache = JSON.parse(readFileSync(new URL("../openclaw.plugin.json", import.meta.url), "utf8")).configSchema ?? null;
    } catch {
      schemaCache = null;
    }
  }
  return schemaCache;
}

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

/**
 * Knob values per `profile` (README "Profiles"). `balanced` is the defaults. A knob the user set
 * explicitly always wins; a profile's previewChars is lowered to the smallest threshold in force
 * (the core requires every threshold to be at least the preview).
 */
export const PROFILES = {
  savings: { tailTokens: 4000, minFoldTokens: 12000, foldRecordBudget: 8000, persist: { previewChars: 2000, defaultThreshold: 4000, thresholds: { bash: 2000, exec: 2000, read: 6000, web_fetch: 2000 } } },
  balanced: { tailTokens: 8000, minFoldTokens: 24000, foldRecordBudget: 16000, persist: { previewChars: 4000, defaultThreshold: 8000, thresholds: { bash: 4000, exec: 4000, read: 12000, web_fetch: 4000 } } },
  recall: { tailTokens: 16000, minFoldTokens: 48000, foldRecordBudget: 32000, persist: { previewChars: 8000, defaultThreshold: 16000, thresholds: { bash: 8000, exec: 8000, read: 24000, web_fetch: 8000 } } },
};

/** Levenshtein distance (small strings: config keys). */
export function editDistance(a, b) {
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
export function nearestKey(key, candidates) {
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

/** Fill the knobs of `raw.profile` the user did not set (raw is already free of unknown keys). */
export function applyProfile(raw) {
  const name = typeof raw.profile === "string" && PROFILES[raw.profile] ? raw.profile : "balanced";
  const p = PROFILES[name];
  const out = { ...raw };
  for (const k of ["tailTokens", "minFoldTokens", "foldRecordBudget"]) if (out[k] === undefined) out[k] = p[k];
  const persist = isObj(out.persist) ? { ...out.persist } : {};
  if (persist.thresholds === undefined) persist.thresholds = { ...p.persist.thresholds };
  if (persist.defaultThreshold === undefined) persist.defaultThreshold = p.persist.defaultThreshold;
  if (persist.previewChars === undefined) {
    const limits = [persist.defaultThreshold, ...Object.values(isObj(persist.thresholds) ? persist.thresholds : {})].map(Number).filter((x) => Number.isFinite(x) && x >= 200);
    persist.previewChars = Math.min(p.persist.previewChars, ...limits);
  }
  out.persist = persist;
  return out;
}

/**
 * Parse the plugin config keeping every valid key: keys (and keys of the nested objects) are
 * added one at a time and a value the core rejects is left out, so its default applies. Returns
 * {config, problems: [{key, value, message}]}; each message names the key, the value and what
 * is allowed. An invalid `mode` means "off" (the safe reading of a mistyped mode).
 */
export function resolveConfig(core, input) {
  let raw = input;
  const problems = [];
  const report = (path, value, err) => {
    const key = path.join(".");
    const fallback = key === "mode" ? ' "off" (passthrough) until it is fixed' : " its default";
    problems.push({
      key,
      value,
      message: `cachefold config: ${key} = ${show(value)} is not valid (${reasonOf(err)}); allowed: ${allowedFor(path)}. Using${fallback}; every other key is kept.`,
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
    if (raw != null) report(["(plugin config)"], raw, new Error("the plugin config must be an object"));
    raw = {};
  }
  raw = dropUnknownKeys(raw, problems);
  if (raw.profile !== undefined && !PROFILES[raw.profile]) {
    report(["profile"], raw.profile, new Error("must be one of savings, balanced, recall"));
    delete raw.profile;
  }
  raw = applyProfile(raw);
  const whole = tryParse(raw);
  if (whole.config) return { config: whole.config, problems };
  const good = {};
  let modeBad = false;
  for (const [k, v] of Object.entries(raw)) {
    const trial = tryParse({ ...good, [k]: v });
    if (trial.config) {
      good[k] = v;
      continue;
    }
    if (isObj(v) && isObj(schemaAt([k])) && schemaAt([k]).type === "object") {
      // Keep the nested keys that are valid on their own.
      const sub = {};
      for (const [k2, v2] of Object.entries(v)) {
        const t2 = tryParse({ ...good, [k]: { ...sub, [k2]: v2 } });
        if (t2.config) sub[k2] = v2;
        else report([k, k2], v2, t2.err);
      }
      if (tryParse({ ...good, [k]: sub }).config) good[k] = sub;
      continue;
    }
    if (k === "mode") modeBad = true;
    report([k], v, trial.err);
  }
  if (modeBad) good.mode = "off";
  const final = tryParse(good);
  return { config: final.config ?? core.parseConfig("{}"), problems };
}
