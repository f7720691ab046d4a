// DeepSeek's tool-call pairing rule, checked on the OpenAI-format request the host sends:
// every assistant message with `tool_calls` must be followed *immediately* by exactly one
// `tool` message per call id (any order among them), and a `tool` message may stand nowhere
// else. DeepSeek answers HTTP 400 otherwise; the fake provider does the same.

/** @returns {{index: number, kind: string, message: string}[]} empty when the request is valid */
export function pairingViolations(messages) {
  const out = [];
  const msgs = Array.isArray(messages) ? messages : [];
  let i = 0;
  while (i < msgs.length) {
    const m = msgs[i];
    if (m?.role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      const want = new Set(m.tool_calls.map((tc) => String(tc?.id ?? "")));
      const seen = new Set();
      let j = i + 1;
      while (j < msgs.length && msgs[j]?.role === "tool") {
        const id = String(msgs[j].tool_call_id ?? "");
        if (!want.has(id)) {
          out.push({ index: j, kind: "orphan_result", message: `Messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id ${id} at ${j} does not belong to the message at ${i})` });
        } else if (seen.has(id)) {
          out.push({ index: j, kind: "duplicate_result", message: `Duplicate tool message for tool_call_id ${id} at ${j}` });
        }
        seen.add(id);
        j++;
      }
      const missing = [...want].filter((id) => !seen.has(id));
      if (missing.length) {
        out.push({ index: i, kind: "missing_result", message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(", ")}` });
      }
      i = j;
      continue;
    }
    if (m?.role === "tool") {
      out.push({ index: i, kind: "orphan_result", message: `Messages with role 'tool' must be a response to a preceding message with 'tool_calls' (message ${i}, tool_call_id ${m.tool_call_id ?? "?"})` });
    }
    i++;
  }
  return out;
}

/** DeepSeek-style error body for the first violation. */
export function deepseekErrorBody(violations) {
  return {
    error: {
      message: violations[0]?.message ?? "invalid request",
      type: "invalid_request_error",
      param: null,
      code: "invalid_request_error",
    },
  };
}

/**
 * DeepSeek's thinking-mode rule (V3.2/V4 with tool calls): an assistant message that carries
 * `tool_calls` must pass its `reasoning_content` back (a string; OpenClaw sends "" when it has
 * none, which DeepSeek accepts). A missing field is HTTP 400 "The `reasoning_content` in the
 * thinking mode must be passed back to the API." Plain text assistant messages may omit it.
 * @returns {{index: number, kind: string, message: string}[]}
 */
export function reasoningViolations(messages) {
  const out = [];
  (Array.isArray(messages) ? messages : []).forEach((m, i) => {
    if (m?.role !== "assistant" || !Array.isArray(m.tool_calls) || m.tool_calls.length === 0) return;
    if (typeof m.reasoning_content !== "string") {
      out.push({ index: i, kind: "missing_reasoning_content", message: `Missing \`reasoning_content\` field in the assistant message at message index ${i}. The \`reasoning_content\` in the thinking mode must be passed back to the API.` });
    }
  });
  return out;
}
