// Topics on vs off in a real OpenClaw 2026.9.6 Gateway (issue 11's e2e): one scripted session
// over three clearly different topics (a database migration, a CSS layout bug, a CI pipeline),
// each turn reading a file and running a command with a few KB of output, in a window small
// enough that folds happen. A fact (a port number) is planted in the second turn of the first
// topic (the first turn's prompt sits in the pinned head, which never folds). The session runs twice, `topics.enabled` true and false (set with `openclaw config set
// plugins.entries.cachefold.config.topics.enabled <bool>`), everything else equal. Skipped
// unless CACHEFOLD_E2E=1 (`.ci/e2e test tests/e2e/topics.test.mjs`).
//
// Asserted from what the fake provider saw and counted:
//   (a) topics on costs no more than off (input cost at DeepSeek flash peak prices of the
//       requests the provider received, re-simulated block-granular and under the strict rule
//       over 16 alignments, through the fact turn: the cachefold_topics turn after it answers a
//       list with topics on and one line with them off), within ALIGNED_TOLERANCE and
//       STRICT_TOLERANCE (below);
//   (b) with topics on at least one fold happened, and a fold record the provider saw has closed
//       topics as lines with topic and turn ids (`- T<n> label (t<a>–t<b>; recover {"id":"T<n>"} …`);
//   (c) the planted fact is answerable at the fact turn: in the request (a fold record or a live
//       message), or recovered by `cachefold_recover` with the id the record gives for the
//       migration topic (the tool result, in the next request, holds the fact);
//   (d) append-only on every request of both runs: each request begins with the previous one's
//       bytes (up to OpenClaw's transient internal-context tail), except where a new fold record
//       appears that the engine declared in its decision log;
//   (e) `cachefold_topics`, called through the scripted model, lists topics with turn ranges.
// A table (topics on/off: requests, prompt, hit, miss, $ input, folds) goes to stderr.
//
// The id of (c): lib/script.mjs has no placeholder for "the id of the record line about X", so
// the fact turn's script is written when that turn starts, from the fold records in the previous
// request the provider received (the bytes the model sees at the start of that turn:
// append-only). The rule is the same for both runs: a record line naming the migration topic
// (`- T<n> … (t<a>–t<b>; recover {"id":"T<n>"} …)`) → recover that topic unless the fact is
// still in context; no such line → the generic `check … recoverFold` step (recover the oldest
// fold by its fold id).
//
// Env: CACHEFOLD_E2E_TOPICS_WINDOWS (context windows, default "48000,96000": at 48K the
// system prompt leaves room for about one turn, so every turn folds a small region; at 96K a
// fold covers several turns and topics),
// CACHEFOLD_E2E_TOPICS_SEED (file sizes and content, default 11), CACHEFOLD_E2E_KEEP=1.

import { describe, it, before } from "node:test";
import assert from "node:assert/strict";
import { Harness } from "./lib/harness.mjs";
import { scriptMarker } from "./lib/script.mjs";
import { summarizeRun, prefixBreaks, requestKind, requestContains, resimulate, strictOverPhases } from "./lib/analyze.mjs";
import { contentText } from "./lib/tokenize.mjs";
import { locateToolchain, REPO_ROOT } from "./lib/env.mjs";

const ENABLED = process.env.CACHEFOLD_E2E === "1";
const SKIP = ENABLED ? false : "set CACHEFOLD_E2E=1 to run the real-OpenClaw topics e2e";
const KEEP = process.env.CACHEFOLD_E2E_KEEP === "1";
const PLUGIN_DIR = process.env.CACHEFOLD_E2E_PLUGIN_DIR || REPO_ROOT;
const SEED = Number(process.env.CACHEFOLD_E2E_TOPICS_SEED ?? 11);
/** DeepSeek's tokenizer vs bytes/4 on agent traffic (as the matrix cells). */
const TOKEN_SCALE = 1.14;
const log = (s) => process.stderr.write(`${s}\n`);
/**
 * (a)'s tolerance, 3 % of off's input cost. The provider's strict DS-unit cache persists a unit
 * at floor128 of each request's length, and OpenClaw ends every request with a ~55-token
 * transient message; whether that unit falls inside the next request's common prefix depends on
 * where the 128-token boundaries land. A record a few bytes longer shifts them: in the first
 * 48K run, the topics-on record was 200 chars longer (its topic lines), and the next two requests
 * hit 2,176 tokens less purely from that shift: +2.3 % input cost (the same in four runs: the
 * script is deterministic), while a block-granular re-simulation of the same requests (every
 * 128-token boundary persisted) differed by 0.1-0.4 %.
 * The table prints that re-simulation beside the provider's figures.
 * Later runs put the strict figure at +2.3 % to +3.3 % at 48K (CI +2.8 %) with the block-granular
 * one at +0.2 % throughout: the alignment shift alone straddled a 3 % bound. So (a) judges the
 * bytes sent, on the block-granular re-simulation, within ALIGNED_TOLERANCE, and keeps the
 * provider's strict figure as a guard against a real regression within 5 %.
 * That single strict figure still straddled any bound: runs on other machines drew other
 * alignments (turn timing and tool-call ids change byte lengths), and one CI run put it at +5.8 %
 * at 96K while its block-granular figure was 0.8 % in topics' favour. So the strict guard is now
 * the strict rule's expected cost over 16 evenly spaced alignments of the 128-token boundaries
 * (strictOverPhases: the same bytes behind fillers of 0-480 bytes, as a system prompt of another
 * length would place them), within STRICT_TOLERANCE; the provider's own single draw is printed
 * beside it.
 * With turns driven over one Gateway connection (chat.send), the block-granular figure at 48K is
 * +1.2 % to +1.4 % in every run (the script is deterministic): at the topic switch the topics-on
 * fold starts ~1,150 tokens earlier, ~940 extra miss tokens that the ~200-token shorter later
 * requests do not pay back within this session (12 folds in 38 requests); at 96K topics on is
 * 1.2 % cheaper. That is a known cost of topics at small windows (README, Known limits), so the
 * bound is 2 %: a real regression of the fold policy with topics still fails it.
 */
const ALIGNED_TOLERANCE = 0.02;
const STRICT_TOLERANCE = 0.03;

export const NEEDLE = "61783";
const FACT = `the staging replica for this migration listens on port ${NEEDLE}`;
const FOLD_ID_RE = /\[cachefold fold ([^\]\s]+)\]/g;

function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x;
  };
}
const pick = (r, xs) => xs[r() % xs.length];
const between = (r, [lo, hi]) => lo + (r() % (hi - lo + 1));

/** Text of about `bytes` bytes built from `line(r, n)`. */
function fileOf(seed, bytes, line) {
  const r = rng(seed);
  const out = [];
  let size = 0;
  for (let n = 1; size < bytes; n++) {
    const l = line(r, n);
    out.push(l);
    size += l.length + 1;
  }
  return out.join("\n") + "\n";
}

const TABLES = ["orders", "customers", "invoices", "shipments", "ledger_entries", "order_items"];
const COLUMNS = ["customer_id", "created_at", "shipped_at", "total_cents", "region_code", "fulfilment_state"];
const SELECTORS = [".checkout-button", ".cart-summary", ".navbar__item", ".modal-backdrop", ".price-tag", ".coupon-field"];
const PROPS = ["display: flex", "z-index: 40", "margin: 0 auto", "padding: 12px 16px", "grid-template-columns: 1fr 2fr", "position: sticky", "font-weight: 600", "overflow: hidden"];
const STEPS = ["restore cargo registry cache", "install sccache", "cargo build --release --locked", "cargo test --workspace --locked", "upload junit report", "cargo clippy -- -D warnings"];
const RUNNERS = ["ubuntu-latest", "macos-14", "windows-2022"];

/**
 * The three topics. Each: user asks (the first opens the topic), a file per turn, and a command
 * printing topic-specific rows (`seq -f`, deterministic, ~rowBytes per row).
 */
const TOPICS = [
  {
    key: "migration",
    asks: [
      "We are starting the orders table partition migration (0042). Read {file} and run the migration dry run.",
      `Continue the orders partition migration. Remember this: ${FACT}; I will ask for it later. Read {file} and run the migration dry run again; watch the lock_timeout on the index builds.`,
      "Next batch of the database migration: read {file}, run the dry run, and tell me whether any ALTER TABLE needs a full table rewrite.",
      "Last migration batch: read {file} and run the dry run; confirm the CREATE INDEX CONCURRENTLY statements and the backfill order.",
    ],
    file: (k) => `db/migrations/0042_orders_partition_${k}.sql`,
    content: (seed, bytes) =>
      fileOf(seed, bytes, (r, n) => {
        const t = pick(r, TABLES);
        const c = pick(r, COLUMNS);
        const kind = r() % 3;
        if (kind === 0) return `ALTER TABLE ${t} ADD COLUMN ${c}_v${n} timestamptz NULL; -- step ${n}`;
        if (kind === 1) return `CREATE INDEX CONCURRENTLY idx_${t}_${c}_${n} ON ${t} (${c}); -- step ${n}`;
        return `UPDATE ${t} SET ${c} = DEFAULT WHERE id % 64 = ${n % 64}; -- backfill step ${n}`;
      }),
    command: (rows) => `seq -f 'migrate dry-run: step %g ALTER TABLE orders_archive ok in 12ms (lock_timeout 5s, statement_timeout 30s)' 1 ${rows}`,
    rowBytes: 98,
  },
  {
    key: "css",
    asks: [
      "New problem, unrelated to the database: on mobile Safari the checkout button overlaps the cart summary. Read {file} and run stylelint on it.",
      "Still the checkout layout bug: read {file} and run stylelint; look for z-index and position: sticky conflicts.",
      "The cart summary still jumps when the coupon field opens: read {file} and run stylelint again.",
      "Final pass on the checkout CSS: read {file}, run stylelint, and list the selectors with duplicate properties.",
    ],
    file: (k) => `web/styles/checkout-${k}.css`,
    content: (seed, bytes) =>
      fileOf(seed, bytes, (r, n) => `${pick(r, SELECTORS)}--v${n} { ${pick(r, PROPS)}; ${pick(r, PROPS)}; color: #${(r() % 0xffffff).toString(16).padStart(6, "0")}; }`),
    command: (rows) => `seq -f 'stylelint web/styles/checkout.css:%g:7 declaration-block-no-duplicate-properties z-index .checkout-button' 1 ${rows}`,
    rowBytes: 104,
  },
  {
    key: "ci",
    asks: [
      "Different task now: the CI pipeline is slow and flaky. Read {file} and run the CI timing report.",
      "Keep going on the CI pipeline: read {file} and run the timing report; which job misses the sccache?",
      "CI again: read {file}, run the timing report, and check the runner matrix (ubuntu, macos, windows).",
      "Last CI change: read {file} and run the timing report; are the junit uploads still retried?",
    ],
    file: (k) => `ci/pipeline-${k}.yml`,
    content: (seed, bytes) =>
      fileOf(seed, bytes, (r, n) => `  - name: ${pick(r, STEPS)} #${n}\n    runs-on: ${pick(r, RUNNERS)}\n    timeout-minutes: ${10 + (r() % 50)}`),
    command: (rows) => `seq -f 'ci timing: job test (ubuntu-latest) step %g cargo test --workspace --locked 41s cache miss sccache' 1 ${rows}`,
    rowBytes: 99,
  },
];

/**
 * The scripted session: 4 turns per topic (a read and an exec each; sizes vary per turn with the
 * seed: files 8-16 KB, so some reads are shrunk to artifacts and some are not, command output
 * 2-5 KB), then a `cachefold_topics` turn. (Files were 6-15 KB until every tool's preview became
 * a 20 % head, a 5 % tail and the Mentions list: the shrunk command outputs then got shorter and
 * the 96K session no longer folded, so (b) had nothing to check there.) The last turn (the fact) is planned at run time
 * (planCheckTurn).
 */
export function buildTopicsSession({ seed = SEED, readKB = [8, 16], execKB = [2, 5] } = {}) {
  const r = rng(seed);
  const files = {};
  const turns = [];
  TOPICS.forEach((topic, ti) => {
    topic.asks.forEach((ask, k) => {
      const file = topic.file(k + 1);
      files[file] = topic.content(seed * 1000 + ti * 10 + k, between(r, readKB) * 1024);
      const rows = Math.max(1, Math.round((between(r, execKB) * 1024) / topic.rowBytes));
      turns.push({
        kind: k === 1 && ti === 0 ? "plant" : "work",
        topic: topic.key,
        message: `${ask.replace("{file}", file)}\n\n${scriptMarker({ steps: [{ read: file }, { exec: topic.command(rows) }], reply: `${topic.key} step ${k + 1} done: ${file} read, ${rows} report rows, nothing blocking.` })}`,
      });
    });
  });
  return { files, turns };
}

/** The inspection turn after the fact check: the model calls cachefold_topics. */
export const TOPICS_TURN = {
  kind: "topics",
  topic: "meta",
  message: `Last thing: list the topics of this session.\n\n${scriptMarker({ steps: [{ plugin: "cachefold_topics", args: {} }], reply: "Those are the topics." })}`,
};

/** Closed-topic lines and detailed sections with turn ids, in a text (a fold record). */
export function topicEntries(text) {
  const out = [];
  // "- T1 label (t1–t3; recover {"id":"T1"} or a turn id)", or "(t5–t6 here, topic t1–t6; …)"
  // when the topic's first turns were folded before, plus its indented "asked:"/"ids:" lines.
  const line = /^- (T\d+) (.*)\((t\d+)–(t\d+)(?: here, topic (t\d+)–(t\d+))?; recover \{"id":"(T\d+)"\}[^\n]*((?:\n {2}[^\n]*)*)/gm;
  for (const m of text.matchAll(line)) out.push({ kind: "closed", topic: m[1], first: m[5] ?? m[3], last: m[6] ?? m[4], here: [m[3], m[4]], recoverId: m[7], text: m[0] });
  const detail = /^## (T\d+) ([^\n]*)\((t\d+)–(t\d+)\), in detail:/gm;
  for (const m of text.matchAll(detail)) out.push({ kind: "detail", topic: m[1], first: m[3], last: m[4], text: m[0] });
  const more = /^- (\d+) more closed topics (T\d+)–(T\d+) \(turns (t\d+)–(t\d+);/gm;
  for (const m of text.matchAll(more)) out.push({ kind: "range", topic: m[2], first: m[4], last: m[5], text: m[0] });
  return out;
}

/** Every fold record text in a request (messages holding a "[cachefold fold <id>]" header; a
 * record may quote a user ask with its script marker, so those are not excluded). */
function foldRecords(body) {
  return (body?.messages ?? []).filter((m) => m.role !== "tool").map((m) => contentText(m.content)).filter((t) => /\[cachefold fold [^\]\s]+\]/.test(t));
}

function foldIds(body) {
  const ids = new Set();
  for (const t of foldRecords(body)) for (const m of t.matchAll(FOLD_ID_RE)) ids.add(m[1]);
  return ids;
}

/**
 * The fact turn's script from what the model sees when the turn starts (the previous request):
 * the record entry whose text names the migration topic gives the id to recover, the topic id
 * the line names (`recover {"id":"T<n>"}`): the fact sits in one of the topic's turns, and the
 * line's turn range is that of the topic's part in this fold, so no single turn id is known to
 * hold it.
 */
export function planCheckTurn(prevBody) {
  const entries = foldRecords(prevBody).flatMap(topicEntries);
  const migration = entries.find((e) => e.kind !== "range" && /migrat|0042|orders_partition/i.test(e.text)) ?? entries.find((e) => e.kind === "range" && e.topic === "T1");
  const ask = "Back to the database migration from the start of the session: which port does the staging replica listen on?";
  const steps = migration
    ? [{ unlessKnown: NEEDLE, steps: [{ plugin: "cachefold_recover", args: { id: migration.recoverId ?? migration.topic, maxChars: 32000 } }] }, { check: NEEDLE }]
    : [{ check: NEEDLE, recoverFold: true }];
  return { kind: "check", topic: "migration", entry: migration ?? null, message: `${ask}\n\n${scriptMarker({ steps })}` };
}

/** Tool results answering a given tool (direct call or Tool Search `tool_call {id}`), unwrapped. */
export function toolResults(body, name) {
  const msgs = body?.messages ?? [];
  const ids = new Map();
  for (const m of msgs) {
    for (const tc of m.tool_calls ?? []) {
      let args = {};
      try {
        args = JSON.parse(tc.function?.arguments ?? "{}");
      } catch {}
      if (tc.function?.name === name) ids.set(tc.id, args);
      else if (tc.function?.name === "tool_call" && args.id === name) ids.set(tc.id, args.args ?? {});
    }
  }
  return msgs
    .filter((m) => m.role === "tool" && ids.has(m.tool_call_id))
    .map((m) => {
      let text = contentText(m.content);
      try {
        const w = JSON.parse(text); // Tool Search: {tool:{…}, result:{content:[{text}]}}
        if (w?.result?.content) text = w.result.content.map((p) => p.text ?? "").join("");
      } catch {}
      return { args: ids.get(m.tool_call_id), text };
    });
}

/** Fold ids the engine declared in its decision log (assemble reports, compact answers). */
function declaredFolds(events) {
  const ids = new Set();
  const add = (f) => f?.id && ids.add(String(f.id));
  for (const e of events) {
    const r = e.report ?? e.answer?.report ?? null;
    for (const f of r?.folds ?? []) add(f);
    add(r?.fold);
    add(r?.condensed);
    for (const f of e.answer?.folds ?? []) add(f);
  }
  return ids;
}

async function runSession(topicsEnabled, session, window) {
  const t0 = Date.now();
  const label = `topics ${topicsEnabled ? "on" : "off"}`;
  const h = await Harness.create({
    engine: "cachefold",
    pluginDir: PLUGIN_DIR,
    pluginConfig: { logFile: "<auto>", topics: { enabled: topicsEnabled } },
    contextWindow: window,
    files: session.files,
    tokenScale: TOKEN_SCALE,
    keep: KEEP,
    log: (s) => log(`[${label}] ${s}`),
  });
  const key = "topics-e2e";
  let check = null;
  try {
    await h.startGateway();
    for (const t of session.turns) {
      const r = await h.turn(key, t.message);
      r.kind = t.kind;
      r.topic = t.topic;
    }
    const prev = [...h.provider.requests].reverse().find((r) => r.status === 200 && r.session != null && requestKind(r) === "main");
    check = planCheckTurn(prev?.body);
    const r = await h.turn(key, check.message);
    r.kind = check.kind;
    r.topic = check.topic;
    const compared = h.provider.requests.length; // (a) compares the session up to here
    const rt = await h.turn(key, TOPICS_TURN.message);
    rt.kind = TOPICS_TURN.kind;
    rt.topic = TOPICS_TURN.topic;
    const events = h.decisionEvents();
    const requests = h.provider.requests;
    const summary = summarizeRun({ requests, turns: h.turns, scenario: { needle: NEEDLE } });
    const upToCheck = summarizeRun({ requests: requests.slice(0, compared), turns: h.turns.filter((t) => t.kind !== "topics"), scenario: { needle: NEEDLE } });
    const main = requests.filter((x) => x.status === 200 && x.session != null && requestKind(x) === "main");
    const seenFolds = new Set(main.flatMap((x) => [...foldIds(x.body)]));
    return { label, topicsEnabled, window, dir: h.dir, totalMs: Date.now() - t0, turns: h.turns, requests, main, events, logs: h.allLogs(), summary, upToCheck, check, seenFolds, declared: declaredFolds(events) };
  } finally {
    await h.close({ keep: KEEP });
  }
}

const checkTurn = (run) => run.turns.find((t) => t.kind === "check");

/** strictOverPhases of a run's requests through the fact turn, computed once per run. */
const strictMemo = new WeakMap();
function strictUpToCheck(r) {
  if (!strictMemo.has(r)) strictMemo.set(r, strictOverPhases(r.requests.slice(0, r.upToCheck.requests)));
  return strictMemo.get(r);
}

function table(runs) {
  const fmt = (n) => n.toLocaleString("en-US");
  const rows = runs.map((r) => {
    const s = r.upToCheck;
    const bg = resimulate(r.requests.slice(0, s.requests), { mode: "optimistic" });
    const st = strictUpToCheck(r);
    return `| ${fmt(r.window)} | ${r.topicsEnabled ? "on" : "off"} | ${s.requests} | ${fmt(s.promptTokens)} | ${fmt(s.hitTokens)} | ${fmt(s.missTokens)} | $${s.inputCostUsd.toFixed(5)} | $${bg.inputCostUsd.toFixed(5)} | $${st.mean.toFixed(5)} ($${st.min.toFixed(5)}–$${st.max.toFixed(5)}) | $${r.summary.inputCostUsd.toFixed(5)} | ${r.seenFolds.size} | ${factPath(r)} | ${(r.totalMs / 1000).toFixed(0)} s |`;
  });
  return [
    `seed ${SEED}, flash peak (hit $0.006/M, miss $0.30/M), provider token scale ${TOKEN_SCALE}; requests..$ input: the session through the fact turn, as the provider counted it (one draw of the 128-token alignment); "$ block-granular": the same requests re-simulated with every 128-token boundary cached (unscaled); "$ strict over alignments": the strict rule re-simulated at 16 alignments, mean (min–max), unscaled; (a) compares those two; "$ with topics turn": the whole run`,
    "| window | topics | requests | prompt | hit | miss | $ input | $ block-granular | $ strict over alignments | $ with topics turn | folds | fact | run |",
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ...rows,
  ].join("\n");
}

/** How the fact turn could answer: "in record <fold id>" (a fold record holds it), "verbatim"
 * (a live message does), "recovered <id>" (a cachefold_recover result does), or "no". */
function factPath(run) {
  const reqs = (checkTurn(run)?.requests ?? []).filter((r) => r.status === 200 && requestKind(r) === "main");
  if (reqs[0] && requestContains(reqs[0].body, NEEDLE)) {
    const rec = foldRecords(reqs[0].body).find((t) => t.includes(NEEDLE));
    return rec ? `in record ${/\[cachefold fold ([^\]\s]+)\]/.exec(rec)[1]}` : "verbatim";
  }
  for (const r of reqs) {
    const hit = toolResults(r.body, "cachefold_recover").find((x) => x.text.includes(NEEDLE));
    if (hit) return `recovered ${hit.args.id}`;
  }
  return "no";
}

const WINDOWS = (process.env.CACHEFOLD_E2E_TOPICS_WINDOWS ?? "48000,96000").split(",").map(Number);

for (const window of WINDOWS) {
  describe(`topics on vs off in a real OpenClaw Gateway, ${window}-token window (issue 11)`, { skip: SKIP, timeout: 30 * 60_000 }, () => {
    const session = buildTopicsSession();
    const runs = {};
    before(async () => {
      locateToolchain();
      // Both arms side by side, each on its own Gateway: every turn waits for the host's post-turn
      // work to land (Harness#settle), so neither arm's figures depend on the other's speed.
      [runs.on, runs.off] = await Promise.all([runSession(true, session, window), runSession(false, session, window)]);
      for (const r of [runs.on, runs.off]) if (KEEP) log(`kept: ${r.dir}`);
      log(table([runs.on, runs.off]));
      for (const r of [runs.on, runs.off]) {
        log(`${r.label} @${window}: folds seen ${[...r.seenFolds].join(",") || "-"}, declared ${[...r.declared].join(",") || "-"}; fact turn plan: ${r.check.entry ? `${r.check.entry.kind} ${r.check.entry.topic} ${r.check.entry.first}–${r.check.entry.last}` : "no topic entry (recoverFold)"}; reply: ${checkTurn(r).text.slice(0, 120)}`);
      }
    });

    it("every turn completed on both runs, no HTTP 400, no degradation", () => {
      for (const r of [runs.on, runs.off]) {
        const bad = r.turns.filter((t) => !t.ok).map((t) => `turn ${t.index} (${t.kind}): ${String(t.error).slice(0, 300)}`);
        assert.deepEqual(bad, [], `${r.label}: failed turns`);
        assert.equal(r.summary.http400, 0, `${r.label}: HTTP 400s`);
        assert.doesNotMatch(r.logs, /degraded to "legacy"|quarantin/i, `${r.label}: engine degraded or quarantined`);
      }
    });

    it("the plugin received topics.enabled as set (config event)", () => {
      for (const r of [runs.on, runs.off]) {
        const cfg = r.events.filter((e) => e.event === "config").at(-1);
        assert.ok(cfg, `${r.label}: no config event in the decision log (${r.dir})`);
        assert.equal(cfg.error ?? null, null, `${r.label}: config error ${cfg.error}`);
        assert.equal(cfg.config?.topics?.enabled, r.topicsEnabled, `${r.label}: config event ${JSON.stringify(cfg.config?.topics)}`);
      }
    });

    it(`(a) topics on costs no more than topics off (block-granular cache, ${ALIGNED_TOLERANCE * 100} % tolerance; the strict rule over alignments within ${STRICT_TOLERANCE * 100} %)`, () => {
      const upTo = (r) => r.requests.slice(0, r.upToCheck.requests);
      const aligned = (r) => resimulate(upTo(r), { mode: "optimistic" }).inputCostUsd;
      const [bgOn, bgOff] = [aligned(runs.on), aligned(runs.off)];
      assert.ok(bgOn <= bgOff * (1 + ALIGNED_TOLERANCE), `block-granular: topics on $${bgOn.toFixed(5)} > off $${bgOff.toFixed(5)} x ${1 + ALIGNED_TOLERANCE} (${((bgOn / bgOff - 1) * 100).toFixed(1)} %)`);
      const [stOn, stOff] = [strictUpToCheck(runs.on), strictUpToCheck(runs.off)];
      const pct = (a, b) => ((a / b - 1) * 100).toFixed(1);
      const provider = `the provider's single draw: on $${runs.on.upToCheck.inputCostUsd.toFixed(5)}, off $${runs.off.upToCheck.inputCostUsd.toFixed(5)} (${pct(runs.on.upToCheck.inputCostUsd, runs.off.upToCheck.inputCostUsd)} %)`;
      log(`strict over 16 alignments @${window}: on $${stOn.mean.toFixed(5)} (${stOn.costs.map((c) => c.toFixed(5)).join(" ")}), off $${stOff.mean.toFixed(5)} (${stOff.costs.map((c) => c.toFixed(5)).join(" ")}): ${pct(stOn.mean, stOff.mean)} %; ${provider}`);
      assert.ok(stOn.mean <= stOff.mean * (1 + STRICT_TOLERANCE), `strict over alignments: topics on $${stOn.mean.toFixed(5)} > off $${stOff.mean.toFixed(5)} x ${1 + STRICT_TOLERANCE} (${pct(stOn.mean, stOff.mean)} %; ${provider})`);
    });

    it("(b) topics on: at least one fold, and a record the provider saw has closed topics as lines with T<n> and t<k> ids", () => {
      const r = runs.on;
      assert.ok(r.seenFolds.size >= 1, `no fold record in any request (declared: ${[...r.declared].join(",") || "none"})`);
      const entries = r.main.flatMap((x) => foldRecords(x.body).flatMap(topicEntries));
      const closed = entries.filter((e) => e.kind === "closed");
      assert.ok(closed.length >= 1, `no closed-topic line in any fold record; records:\n${[...new Set(r.main.flatMap((x) => foldRecords(x.body)))].map((t) => t.slice(0, 600)).join("\n---\n")}`);
      for (const e of closed) {
        assert.match(e.first, /^t\d+$/);
        assert.match(e.last, /^t\d+$/);
        assert.equal(e.recoverId, e.topic, `recover id of ${e.text}`);
        assert.ok(Number(e.first.slice(1)) <= Number(e.last.slice(1)), `turn range ${e.first}–${e.last}`);
      }
      // With topics off no record has topic lines.
      const offEntries = runs.off.main.flatMap((x) => foldRecords(x.body).flatMap(topicEntries));
      assert.deepEqual(offEntries.map((e) => e.text), [], "topics off rendered topic lines");
    });

    it("(c) topics on: the planted fact is answerable at the fact turn (verbatim, or recovered by the id the record gives)", () => {
      const r = runs.on;
      const how = factPath(r);
      const turn = checkTurn(r);
      assert.notEqual(how, "no", `fact ${NEEDLE} neither in the fact turn's request nor in a cachefold_recover result; plan ${JSON.stringify(r.check.entry)}; reply ${turn.text.slice(0, 200)}`);
      if (how.startsWith("recovered")) {
        const id = how.split(" ")[1];
        assert.ok(r.check.entry && [r.check.entry.recoverId, r.check.entry.topic, r.check.entry.first].includes(id), `recovered through ${id}, not an id of the record entry ${JSON.stringify(r.check.entry)}`);
      }
      assert.match(turn.text, new RegExp(`CHECK ${NEEDLE}: (present|recovered)`), `reply: ${turn.text.slice(0, 200)}`);
    });

    it("(d) append-only on every request of both runs, except where a declared fold appears", () => {
      for (const r of [runs.on, runs.off]) {
        const bySeq = new Map(r.main.map((x) => [x.seq, x]));
        const breaks = prefixBreaks(r.main);
        const unexplained = [];
        for (const b of breaks) {
          const before = foldIds(bySeq.get(b.prevSeq)?.body);
          const fresh = [...foldIds(bySeq.get(b.seq)?.body)].filter((id) => !before.has(id));
          const declared = fresh.filter((id) => r.declared.has(id));
          if (declared.length === 0) unexplained.push({ ...b, freshFolds: fresh });
        }
        assert.deepEqual(unexplained, [], `${r.label}: prefix breaks without a declared fold (of ${breaks.length} breaks)`);
        log(`${r.label} @${window}: ${r.main.length} requests, ${breaks.length} prefix breaks, each at a new declared fold record`);
      }
    });

    it("(e) cachefold_topics through the model lists topics with turn ranges", () => {
      const turn = runs.on.turns.find((t) => t.kind === "topics");
      const result = turn.requests.flatMap((x) => (x.status === 200 ? toolResults(x.body, "cachefold_topics") : [])).at(-1);
      assert.ok(result, `no cachefold_topics result in the topics turn (reply ${turn.text.slice(0, 200)})`);
      const lines = [...result.text.matchAll(/^(T\d+) (t\d+)–(t\d+) \((\d+) turns?, ~\d+ tokens, ([\w ]+?)[,)]/gm)];
      assert.ok(lines.length >= 2, `expected >= 2 topics with turn ranges for three different tasks:\n${result.text.slice(0, 1500)}`);
      // The ranges follow each other: each starts after the previous one ends.
      for (let i = 1; i < lines.length; i++) assert.ok(Number(lines[i][2].slice(1)) > Number(lines[i - 1][3].slice(1)), `ranges overlap: ${lines[i - 1][0]} / ${lines[i][0]}`);
      log(`cachefold_topics (topics on, ${window}):\n${result.text}`);
      // With topics off the tool says so rather than listing topics.
      const offTurn = runs.off.turns.find((t) => t.kind === "topics");
      const off = offTurn.requests.flatMap((x) => (x.status === 200 ? toolResults(x.body, "cachefold_topics") : [])).at(-1);
      assert.ok(off, "no cachefold_topics result with topics off");
      assert.doesNotMatch(off.text, /^T\d+ t\d+–t\d+/m, `topics off listed topics:\n${off.text.slice(0, 500)}`);
    });
  });
}
