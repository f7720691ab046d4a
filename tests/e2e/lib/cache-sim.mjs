// DeepSeek prefix-cache simulation, "DS-unit" model of docs/cache-model.md
//
// A request's input X is its canonical serialization (tokenize.mjs); its output Y is the
// assistant message it produced, serialized the same way. Tokens are 4-byte pieces, so a
// B-token block is 4·B bytes and a prefix of k blocks is identified by a chained SHA-1 over the
// first k blocks. After request j these "units" are persisted:
//   - B·⌊|X_j|/B⌋ over X_j                    (end of input)
//   - B·⌊(|X_j|+|Y_j|)/B⌋ over X_j ⊕ Y_j       (end of output)
//   - B·⌊LCP(X_j, X_j')/B⌋ for every j' < j     (common-prefix detection)
//   - mode "optimistic" only: every block boundary of X_j ⊕ Y_j (fixed interval K = B)
// The hit of request i is the largest persisted unit u ≤ |X_i| whose prefix equals X_i[0:u];
// miss = |X_i| − hit. Units are added *after* the hit is computed, so a request never hits
// itself. The cache is per simulator instance (one per engine run), never evicted.

import { createHash } from "node:crypto";
import { BYTES_PER_TOKEN } from "./tokenize.mjs";

/** Default DeepSeek V4 unit in tokens. */
export const DS_BLOCK = 128;

/** Chained block hashes of a byte buffer: result[k] identifies the first k blocks (result[0] = ""). */
export function blockChain(buf, blockBytes) {
  const n = Math.floor(buf.length / blockBytes);
  const out = new Array(n + 1);
  out[0] = "";
  let prev = "";
  for (let k = 1; k <= n; k++) {
    const h = createHash("sha1");
    h.update(prev);
    h.update(buf.subarray((k - 1) * blockBytes, k * blockBytes));
    prev = h.digest("hex");
    out[k] = prev;
  }
  return out;
}

/**
 * The chain of `inputText` in `blockBytes` blocks and how many of its leading blocks `units`
 * (a Set or Map keyed by chain hash) holds: the longest cached prefix, in blocks.
 */
export function longestCached(units, inputText, blockBytes) {
  const buf = Buffer.from(inputText, "utf8");
  const tokens = Math.ceil(buf.length / BYTES_PER_TOKEN);
  const chain = blockChain(buf, blockBytes);
  let blocks = 0;
  for (let k = chain.length - 1; k >= 1; k--) {
    if (units.has(chain[k])) {
      blocks = k;
      break;
    }
  }
  return { tokens, chain, blocks };
}

export class CacheSim {
  /** @param {{block?: number, mode?: "strict"|"optimistic"}} [opts] */
  constructor(opts = {}) {
    this.block = opts.block ?? DS_BLOCK;
    this.mode = opts.mode ?? "strict";
    this.blockBytes = this.block * BYTES_PER_TOKEN;
    /** @type {Set<string>} chain hashes of persisted units */
    this.units = new Set();
    /** @type {string[][]} chains of earlier inputs, for common-prefix detection */
    this.inputs = [];
  }

  /** Hit/miss for an input (canonical text), without persisting anything. */
  lookup(inputText) {
    const { tokens, chain, blocks } = longestCached(this.units, inputText, this.blockBytes);
    const hit = blocks * this.block;
    return { tokens, hit, miss: tokens - hit, chain };
  }

  /** Account one request: returns {tokens, hit, miss}, then persists its units. */
  request(inputText, outputText) {
    const r = this.lookup(inputText);
    const chain = r.chain;
    // End of input.
    if (chain.length > 1) this.units.add(chain[chain.length - 1]);
    // End of input + output (and every boundary in optimistic mode).
    const full = blockChain(Buffer.from(inputText + (outputText ?? ""), "utf8"), this.blockBytes);
    if (full.length > 1) this.units.add(full[full.length - 1]);
    if (this.mode === "optimistic") for (let k = 1; k < full.length; k++) this.units.add(full[k]);
    // Common prefixes with every earlier input.
    for (const other of this.inputs) {
      let k = 0;
      const max = Math.min(other.length, chain.length) - 1;
      while (k < max && other[k + 1] === chain[k + 1]) k++;
      if (k >= 1) this.units.add(chain[k]);
    }
    this.inputs.push(chain);
    return { tokens: r.tokens, hit: r.hit, miss: r.miss };
  }
}

/**
 * OpenAI automatic prefix caching (developers.openai.com/api/docs/guides/prompt-caching): a
 * prompt's prefix is cached in `block`-token steps once the prompt has `minTokens` tokens; a
 * request hits the longest cached prefix in those steps, and nothing below `minTokens`
 * (cached_tokens 0). An entry lives `ttlMs` after its last use (every request through it
 * refreshes it), then it is gone. Only inputs are cached (the answer is cached once it comes
 * back as input). `now()` is the clock (injectable for tests).
 */
export class OpenAICacheSim {
  /** @param {{minTokens?: number, block?: number, ttlMs?: number, now?: () => number}} [opts] */
  constructor(opts = {}) {
    this.minTokens = opts.minTokens ?? 1024;
    this.block = opts.block ?? 128;
    this.ttlMs = opts.ttlMs ?? 10 * 60_000;
    this.now = opts.now ?? Date.now;
    this.blockBytes = this.block * BYTES_PER_TOKEN;
    /** @type {Map<string, number>} chain hash of a cached prefix -> last use (ms) */
    this.units = new Map();
    this.expired = 0;
  }

  /** Drop entries idle past the lifetime. */
  expire(at) {
    for (const [k, t] of this.units) {
      if (at - t > this.ttlMs) {
        this.units.delete(k);
        this.expired++;
      }
    }
  }

  lookup(inputText, at = this.now()) {
    this.expire(at);
    const { tokens, chain, blocks } = longestCached(this.units, inputText, this.blockBytes);
    const matched = blocks * this.block;
    const hit = matched >= this.minTokens ? matched : 0;
    return { tokens, hit, miss: tokens - hit, chain };
  }

  /** Account one request at `at` (ms): {tokens, hit, miss}; then caches its prefix (>= minTokens). */
  request(inputText, _outputText, at = this.now()) {
    const r = this.lookup(inputText, at);
    if (r.tokens >= this.minTokens) for (let k = 1; k < r.chain.length; k++) this.units.set(r.chain[k], at);
    return { tokens: r.tokens, hit: r.hit, miss: r.miss };
  }
}
