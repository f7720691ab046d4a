// Secret redaction of everything lessons write (candidate and lesson files, the system-prompt
// addition, the decision log), applied before the write.
//
// Three layers, each replacing what it finds by REDACTED:
//   1. the core's redactor (src/lessons/redact.rs), when a core is given;
//   2. secretlint's recommended rule preset (@secretlint/secretlint-rule-preset-recommend): the
//      maintained rules of a secret scanner for tokens with a known shape (AWS, GCP, GitHub,
//      GitLab, npm, Slack, OpenAI, Anthropic, Hugging Face, private keys, basic auth in URLs,
//      database connection strings, …). Asynchronous, so only redact() applies it;
//   3. CONTEXT below: secrets recognised by where they stand (NAME=value where the name says
//      password/token/secret/key, `--token X`, `mysql -pX`, `Authorization: token X`) and a few
//      token shapes the preset lacks (age, DigitalOcean, Twilio, a bare AWS secret key).
import { lintSource } from "@secretlint/core";
import { creator as recommended } from "@secretlint/secretlint-rule-preset-recommend";

export const REDACTED = "[REDACTED]";

const SECRET_NAME = String.raw`[A-Za-z0-9_.-]*(?:PASS(?:WORD|WD)?|PWD|SECRET|TOKEN|API[_-]?KEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|_KEY|KEY_|CREDENTIALS?|AUTH)[A-Za-z0-9_]*`;
// A value, unless it is already redacted or is the scheme word of an Authorization header.
const VALUE = String.raw`(?!\[REDACTED\])(?!(?:token|bearer|basic)\s)(?:"[^"\n]*"|'[^'\n]*'|[^\s"'\`;&|,)}\]]+)`;

/** [regex, replacer] pairs; each regex is global. */
const CONTEXT = [
  // Authorization: token X / Bearer X / Basic X, and the same in -H '…'
  [/(\bauthorization\s*[:=]\s*(?:token|bearer|basic)?\s*)([^\s"'\`]+)/gi, (_, a) => `${a}${REDACTED}`],
  // PGPASSWORD=…, DBPASS=…, OPENAI_KEY: …, "api_key": "…" (the name stays, the value goes)
  [new RegExp(String.raw`(\b${SECRET_NAME}["']?\s*[=:]\s*)${VALUE}`, "gi"), (_, a) => `${a}${REDACTED}`],
  // --token X, --password=X, --api-key X, --client-secret X, -p X is left alone (ports, dirs)
  [/(--?(?:token|password|passwd|pass|secret|api[-_]?key|access[-_]?key|auth(?:[-_]token)?|client[-_]secret|private[-_]key)(?:=|\s+))(?!\[REDACTED\])("[^"\n]*"|'[^'\n]*'|[^\s"'\`]+)/gi, (_, a) => `${a}${REDACTED}`],
  // mysql/mariadb -pSECRET (the password glued to -p)
  [/(\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?\s-p)(?!\s|\[REDACTED\])([^\s"'\`]+)/gi, (_, a) => `${a}${REDACTED}`],
  // Shapes the preset lacks.
  [/\bAGE-SECRET-KEY-1[0-9A-Za-z]{20,}/g, () => REDACTED],
  [/\bdo[por]_v1_[0-9a-f]{64}\b/g, () => REDACTED],
  [/\bSK[0-9a-fA-F]{32}\b/g, () => REDACTED],
  [/\b(?:hf_[A-Za-z0-9]{30,}|glpat-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{36}|xapp-\d-[A-Za-z0-9-]{20,}|sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}|[rs]k_(?:live|test)_[A-Za-z0-9]{16,})/g, () => REDACTED],
  // A bare AWS secret access key: 40 characters of base64 with upper and lower case letters and
  // a digit, `/` or `+` (hex digests and words do not qualify).
  [/(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g, (m) => (/[A-Z]/.test(m) && /[a-z]/.test(m) && /[0-9/+]/.test(m) ? REDACTED : m)],
];

/** The context rules and, when given, the core's redactor: synchronous (decision log lines). */
export function redactSync(text, core = null) {
  if (typeof text !== "string" || !text) return text;
  let out = text;
  if (typeof core?.redactSecrets === "function") {
    try {
      out = core.redactSecrets(out);
    } catch {
      /* the other layers still apply */
    }
  }
  for (const [re, fn] of CONTEXT) out = out.replace(re, fn);
  return out;
}

const CONFIG = { rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: recommended }] };

/** Every layer: the core's, secretlint's recommended preset, the context rules. */
export async function redact(text, core = null) {
  if (typeof text !== "string" || !text) return text;
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
  return redactSync(out, core);
}

/** A copy of `value` (lesson objects: strings, arrays, plain objects) with every string redacted. */
export async function redactDeep(value, core = null) {
  if (typeof value === "string") return redact(value, core);
  if (Array.isArray(value)) return Promise.all(value.map((v) => redactDeep(v, core)));
  if (value && typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = await redactDeep(v, core);
    return out;
  }
  return value;
}
