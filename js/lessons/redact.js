// Secret redaction of everything lessons write (candidate and lesson files, the system-prompt
// addition, the decision log), applied before the write.
//
// Two layers, each replacing what it finds by REDACTED:
//   1. secretlint's recommended rule preset (@secretlint/secretlint-rule-preset-recommend): the
//      maintained rules of a secret scanner for tokens with a known shape (AWS, GCP, GitHub,
//      GitLab, npm, Slack, OpenAI, Anthropic, Hugging Face, private keys, basic auth in URLs,
//      database connection strings, …). Asynchronous, so only redact() applies it;
//   2. the core's redactor (src/lessons/redact.rs, `redactSecrets`), always: the one rule set
//      the core itself applies to candidates, injections and decision-log text (token shapes,
//      NAME=value, `--token X`, `mysql -pX`, `Authorization: token X`, URL credentials, …).
//      Without the caller's core object it is the main instance from js/core.js; when no core
//      can be had, these functions throw: nothing is written unredacted.
import { lintSource } from "@secretlint/core";
import { creator as recommended } from "@secretlint/secretlint-rule-preset-recommend";
import { loadCore, loadCoreSync } from "../core.js";

export const REDACTED = "[REDACTED]";

/** `text` through the core's redactor (`core`, else the main instance). */
function coreRedact(text, core) {
  if (typeof core?.redactSecrets !== "function") throw new Error("cachefold: the core's secret redactor is not available");
  return core.redactSecrets(text);
}

/** The core's redaction, synchronous (decision log lines, refresh notes). */
export function redactSync(text, core = null) {
  if (typeof text !== "string" || !text) return text;
  return coreRedact(text, core ?? loadCoreSync());
}

const CONFIG = { rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: recommended }] };

/** Both layers: secretlint's recommended preset, then the core's redactor. */
export async function redact(text, core = null) {
  if (typeof text !== "string" || !text) return text;
  const c = core ?? (await loadCore());
  let out = text;
  const res = await lintSource({ source: { filePath: "/cachefold-lesson.txt", content: out, contentType: "text" }, options: { config: CONFIG, maskSecrets: false } });
  const ranges = res.messages.map((m) => m.range).filter((r) => Array.isArray(r) && r[1] > r[0]).sort((a, b) => b[0] - a[0]);
  let floor = Infinity;
  for (const [s, e0] of ranges) {
    // A rule may match a token's head only: the rest of the token goes too.
    let e = e0;
    while (e < out.length && /[A-Za-z0-9_\-/+=.]/.test(out[e])) e += 1;
    const end = Math.min(e, floor);
    if (end <= s) continue;
    out = `${out.slice(0, s)}${REDACTED}${out.slice(end)}`;
    floor = s;
  }
  return coreRedact(out, c);
}
