// Reading one `openclaw agent --json` result: the reply text, and why a turn failed.

/** First string value of `key` anywhere in a JSON value (depth-first). */
export function findKey(v, key, depth = 0) {
  if (!v || typeof v !== "object" || depth > 8) return null;
  if (typeof v[key] === "string") return v[key];
  for (const x of Object.values(v)) {
    const r = findKey(x, key, depth + 1);
    if (r) return r;
  }
  return null;
}

/**
 * Why a turn failed, or null when it completed: a non-zero exit or a timeout, an error or
 * errorCode in the `--json` result (the Gateway answers `res ✗ agent errorCode=UNAVAILABLE` when
 * the run fails before the model, e.g. "Preflight compaction required but failed"), or no reply.
 */
export function turnError({ code, timedOut, json, text, stdout = "", stderr = "" }) {
  const errText = (json && (findKey(json, "errorMessage") ?? findKey(json, "error") ?? errorMessageOf(json))) || null;
  const errCode = (json && findKey(json, "errorCode")) || null;
  const status = json && typeof json.status === "string" ? json.status : null;
  const tail = (stderr || stdout).trim().split("\n").filter(Boolean).slice(-3).join(" | ");
  if (timedOut) return `timed out${tail ? `: ${tail}` : ""}`;
  if (code !== 0) return `exit ${code}${errCode ? ` errorCode=${errCode}` : ""}: ${errText ?? tail}`;
  if (errCode || (status && /^(error|failed|aborted)$/i.test(status))) return `${errCode ? `errorCode=${errCode}` : `status=${status}`}: ${errText ?? tail}`;
  if (!json) return `no JSON result: ${tail}`;
  if (!text || !text.trim()) return `no reply text${errText ? `: ${errText}` : ""}`;
  return null;
}

function errorMessageOf(json) {
  const e = json?.error ?? json?.result?.error;
  if (e && typeof e === "object") return e.message ?? JSON.stringify(e).slice(0, 500);
  return null;
}

/** Reply text from `openclaw agent --json` output (shape varies a little across versions). */
export function extractReplyText(json) {
  if (!json || typeof json !== "object") return null;
  const p = json.result?.payloads ?? json.payloads;
  if (Array.isArray(p)) return p.map((x) => x?.text ?? "").join("\n");
  if (typeof json.final === "string") return json.final;
  if (typeof json.text === "string") return json.text;
  return null;
}
