// Scripted sessions for the e2e matrix (matrix.mjs): an agent working through markdown docs.
// Every work turn reads one markdown file (size drawn from `readKB`) and runs one shell command
// printing `execKB` of output, then answers; turn 0 plants a fact, the last turn asks for it.
// Plain data and deterministic in `seed`, so legacy and cachefold see byte-identical scripts.
//
//   buildMatrixScenario({ turns: 18, readKB: [12, 40], execKB: [2, 6] })
//   buildMatrixScenario({ ..., sessions: ["a", "b"] })   // interleaved turns on two session keys
//   buildMatrixScenario({ ..., compactAt: [9] })          // the user types "/compact" at turn 9

import { scriptMarker } from "./script.mjs";
import { bigOutputCommand } from "./scenarios.mjs";

/** One fact per session key, planted in that session's first turn and asked in its last. */
export const MATRIX_FACTS = [
  { fact: "The launch code is ZEBRA-4417", needle: "ZEBRA-4417", what: "launch code" },
  { fact: "The vault combination is LYNX-8820", needle: "LYNX-8820", what: "vault combination" },
];

function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x;
  };
}
const WORDS = "cache prefix token fold record artifact session result window budget gateway plugin engine transcript compaction summary provider request stream usage model tool shell output".split(" ");

/** A markdown document of about `bytes` bytes: headings, paragraphs, lists, a code block, a table. */
export function makeMarkdownFile(seed, bytes, title = `Document ${seed}`) {
  const r = rng(seed);
  const word = () => WORDS[r() % WORDS.length];
  const sentence = () => {
    const n = 8 + (r() % 10);
    const w = Array.from({ length: n }, word);
    w[0] = w[0][0].toUpperCase() + w[0].slice(1);
    return `${w.join(" ")}.`;
  };
  const parts = [`# ${title}\n`];
  let size = parts[0].length;
  for (let sec = 1; size < bytes; sec++) {
    const block = [`\n## ${sec}. ${word()} ${word()}\n`];
    block.push(Array.from({ length: 4 + (r() % 4) }, sentence).join(" "));
    block.push("\n" + Array.from({ length: 3 + (r() % 3) }, (_, i) => `- item ${sec}.${i + 1}: ${sentence()}`).join("\n"));
    if (sec % 3 === 0) block.push(`\n\`\`\`sh\nopenclaw config set plugins.entries.doc${seed}.k${sec} ${r() % 100000}\n\`\`\``);
    if (sec % 4 === 0) block.push(`\n| key | value |\n|---|---:|\n${Array.from({ length: 4 }, () => `| ${word()}_${r() % 1000} | ${r() % 100000} |`).join("\n")}`);
    const text = block.join("\n") + "\n";
    parts.push(text);
    size += text.length;
  }
  return parts.join("").slice(0, bytes);
}

const msg = (text, script) => (script ? `${text}\n\n${scriptMarker(script)}` : text);
const between = (r, [lo, hi]) => lo + (hi > lo ? r() % (hi - lo + 1) : 0);

/**
 * @param {object} [o]
 * @param {number} [o.turns]             user turns in total (all sessions), >= 2 per session
 * @param {[number,number]} [o.readKB]   markdown read sizes, KB (inclusive range)
 * @param {[number,number]} [o.execKB]   exec output sizes, KB
 * @param {number} [o.toolsPerTurn]      read+exec pairs per work turn (default 1)
 * @param {number} [o.agentsMdKB]        a workspace AGENTS.md of this size (project instructions
 *                                       OpenClaw puts into the system prompt, as in a real workspace)
 * @param {string[]} [o.sessions]        session keys; turns are dealt round-robin
 * @param {number[]} [o.compactAt]       turn indexes whose message is "/compact"
 * @param {number} [o.seed]
 * @param {string} [o.name]
 * @returns {{name, files, turns: {message, kind, session}[], fact, needle, facts: {session, fact, needle}[], defaultWindow}}
 */
export function buildMatrixScenario(o = {}) {
  const sessions = o.sessions ?? ["main"];
  const n = Math.max(2 * sessions.length, o.turns ?? 18);
  const readKB = o.readKB ?? [12, 40];
  const execKB = o.execKB ?? [2, 6];
  const compactAt = new Set(o.compactAt ?? []);
  const r = rng(o.seed ?? 7);
  const files = {};
  if (o.agentsMdKB) files["AGENTS.md"] = makeMarkdownFile(99, o.agentsMdKB * 1024, "Project instructions");
  const facts = sessions.map((s, i) => ({ session: s, ...MATRIX_FACTS[i % MATRIX_FACTS.length] }));
  const perSession = sessions.map((_, i) => Math.floor(n / sessions.length) + (i < n % sessions.length ? 1 : 0));
  const seen = sessions.map(() => 0);
  const turns = [];
  for (let i = 0; i < n; i++) {
    const si = i % sessions.length;
    const session = sessions[si];
    const k = seen[si]++;
    const f = facts[si];
    if (k === 0) {
      turns.push({ session, kind: "plant", message: msg(`${f.fact}. Please remember it; I will ask later.`, { steps: [], reply: `Noted the ${f.what}.` }) });
    } else if (k === perSession[si] - 1) {
      turns.push({ session, kind: "check", message: msg(`What is the ${f.what} I gave you at the start?`, { steps: [{ check: f.needle, recoverFold: true }] }) });
    } else if (compactAt.has(i)) {
      turns.push({ session, kind: "compact", message: "/compact" });
    } else {
      const steps = [];
      const names = [];
      let kb = 0;
      for (let j = 0; j < (o.toolsPerTurn ?? 1); j++) {
        const name = `docs/guide-${String(i).padStart(2, "0")}${j ? `-${j}` : ""}.md`;
        const bytes = between(r, readKB) * 1024;
        files[name] = makeMarkdownFile(100 + i + 1000 * j, bytes, `Guide ${i}${j ? `.${j}` : ""}`);
        const rows = Math.max(1, Math.round((between(r, execKB) * 1024) / 46));
        steps.push({ read: name }, { exec: bigOutputCommand(rows, `chk${i}${j ? `x${j}` : ""}`) });
        names.push(name);
        kb += Math.round(bytes / 1024);
      }
      turns.push({
        session,
        kind: "work",
        message: msg(`Read ${names.join(", ")} and run the doc check for section ${i}; tell me if anything is off.`, {
          steps,
          reply: `Guide ${i} reviewed: ${kb} KB read, ${steps.length / 2} checks run, nothing off.`,
        }),
      });
    }
  }
  return { name: o.name ?? "matrix", files, turns, fact: facts[0].fact, needle: facts[0].needle, facts, defaultWindow: 48_000 };
}
