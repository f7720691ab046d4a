// Canonical request serialization and the deterministic token approximation used by the fake
// provider. Every engine is measured with exactly these functions, so comparisons are fair even
// though the absolute numbers are only approximate.
//
// Serialization (mirrors the DeepSeek-V4 chat template closely enough for prefix caching):
//   system messages at the head → "<|system|>" + text
//   then the tools array        → "<|tools|>" + JSON.stringify(tools)   (order as sent)
//   then every other message    → serializeMessage(m) (below), in order
// Tool-call ids are not rendered (the V4 template does not render them either), so the host's id
// normalization (`call_1` → `call1`) does not move the prefix. Images render as a fixed marker.
//
// Tokens: the UTF-8 bytes of that text cut into 4-byte pieces, i.e. tokens = ceil(bytes / 4).
// Piece k is bytes [4k, 4k+4), so the token sequence of a prefix string is a prefix of the token
// sequence of the whole string, and a 128-token cache unit is exactly 512 bytes. Real DeepSeek
// tokens run about 14 % above chars/4 on agent traffic (docs/cache-model.md); this only
// scales every engine's numbers the same way.

/** Bytes per approximate token. */
export const BYTES_PER_TOKEN = 4;

/** Text of an OpenAI-style `content` (string, array of parts, or null). */
export function contentText(content) {
  if (content == null) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => {
        if (p == null) return "";
        if (typeof p === "string") return p;
        if (p.type === "text" || typeof p.text === "string") return p.text ?? "";
        if (p.type === "image_url" || p.type === "image") return "<|image|>";
        return JSON.stringify(p);
      })
      .join("");
  }
  return JSON.stringify(content);
}

/** One message in canonical form. The assistant form is also used for the model's *output*, so an
 * assistant turn re-sent unchanged continues the previous request's input+output prefix. */
export function serializeMessage(m) {
  const role = m?.role ?? "unknown";
  if (role === "assistant") {
    let s = "<|Assistant|>";
    if (typeof m.reasoning_content === "string" && m.reasoning_content) s += `<think>${m.reasoning_content}</think>`;
    s += contentText(m.content);
    for (const tc of m.tool_calls ?? []) {
      const f = tc?.function ?? {};
      s += `<|tool_call|>${f.name ?? ""}\n${typeof f.arguments === "string" ? f.arguments : JSON.stringify(f.arguments ?? {})}<|/tool_call|>`;
    }
    return s + "<|end|>";
  }
  if (role === "tool") return `<|tool_result|>${contentText(m.content)}<|/tool_result|>`;
  if (role === "user") return `<|User|>${contentText(m.content)}`;
  if (role === "system" || role === "developer") return `<|system|>${contentText(m.content)}`;
  return `<|${role}|>${contentText(m.content)}`;
}

/** Canonical text of a chat-completions request body: (system, tools, messages). */
export function serializeRequest(body) {
  const msgs = Array.isArray(body?.messages) ? body.messages : [];
  let i = 0;
  let s = "";
  while (i < msgs.length && (msgs[i]?.role === "system" || msgs[i]?.role === "developer")) {
    s += serializeMessage(msgs[i]);
    i++;
  }
  s += `<|tools|>${JSON.stringify(body?.tools ?? [])}`;
  for (; i < msgs.length; i++) s += serializeMessage(msgs[i]);
  return s;
}

/** Approximate token count of a string. */
export function countTokens(text) {
  return Math.ceil(Buffer.byteLength(text, "utf8") / BYTES_PER_TOKEN);
}
