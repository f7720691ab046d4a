// Scripted sessions. Each scenario is plain data: workspace files to create and the user
// messages of each turn (with the script marker the fake model follows, see script.mjs).
//
//   basic  — plant a fact, a big `read`, a big `exec`, a recover through Tool Search, plain turns,
//            then check the fact. Short; the default for smoke runs.
//   tools  — the tool-output path in detail: big read, big exec, exact-range recover of the exec
//            artifact, a plain turn after the shrunk result (cache hit across it), fact check.
//   fold   — many turns of mid-sized, non-shrinkable content (reads and exec output under the
//            shrink thresholds, long user messages) so a small context window forces folds /
//            host compaction; fact planted in turn 0 and checked in the last turn.

import { scriptMarker } from "./script.mjs";

export const FACT = "The launch code is ZEBRA-4417";
export const FACT_NEEDLE = "ZEBRA-4417";

/** Deterministic pseudo-random generator (LCG), so files are identical for every engine. */
function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x;
  };
}
const WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu".split(" ");

/** A log-like text file of about `bytes` bytes with numbered lines (line N starts "L000N "). */
export function makeTextFile(seed, bytes, { lineLen = 80 } = {}) {
  const r = rng(seed);
  const lines = [];
  let size = 0;
  for (let n = 1; size < bytes; n++) {
    let line = `L${String(n).padStart(5, "0")} `;
    while (line.length < lineLen - 10) line += WORDS[r() % WORDS.length] + " ";
    line += `id=${(r() % 0xffffff).toString(16).padStart(6, "0")}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n") + "\n";
}

/** A shell command printing about `bytes` bytes, deterministic, no network, no writes. */
export function bigOutputCommand(rows, tag = "row") {
  // ~46 bytes per row
  return `seq -f '${tag} %06g payload=abcdefghijklmnopqrstuvwxyz0123' 1 ${rows}`;
}

function msg(text, script) {
  return script ? `${text}\n\n${scriptMarker(script)}` : text;
}

/** Long but ordinary user text (instructions the engine must keep verbatim when folding). */
function requirementText(k, chars) {
  const r = rng(1000 + k);
  let s = `Requirement batch ${k}: `;
  while (s.length < chars) s += `${WORDS[r() % WORDS.length]} ${WORDS[r() % WORDS.length]} must stay ${WORDS[r() % WORDS.length]}; `;
  return s;
}

/**
 * @param {"basic"|"tools"|"fold"} name
 * @param {{turns?: number, recoverArgs?: object}} [opts]
 * @returns {{name:string, files:Record<string,string>, turns:{message:string, kind:string}[], fact:string, needle:string, defaultWindow:number}}
 */
export function buildScenario(name, opts = {}) {
  const recoverArgs = opts.recoverArgs ?? { id: "$ARTIFACT", lines: [100, 120] };
  const plant = { kind: "plant", message: msg(`${FACT}. Please remember it; I will ask later.`, { steps: [], reply: "Noted the launch code." }) };
  const check = { kind: "check", message: msg("What is the launch code I gave you at the start?", { steps: [{ check: FACT_NEEDLE, recoverFold: true }] }) };
  if (name === "basic") {
    const files = { "big.txt": makeTextFile(1, 60_000) };
    const middle = [
      { kind: "read", message: msg("Read big.txt and tell me what it contains.", { steps: [{ read: "big.txt" }], reply: "big.txt is a numbered log." }) },
      { kind: "exec", message: msg("Run the report command.", { steps: [{ exec: bigOutputCommand(2000) }], reply: "The report printed 2000 rows." }) },
      { kind: "recover", message: msg("Show me rows 100 to 120 of that output again.", { steps: [{ plugin: "cachefold_recover", args: recoverArgs }], reply: "Here are the rows." }) },
      { kind: "text", message: msg("Thanks. Summarize what we did so far in one line.", { steps: [], reply: "We read a file and ran a report." }) },
    ];
    const n = Math.max(2, opts.turns ?? 6);
    const turns = [plant];
    for (let i = 0; turns.length < n - 1; i++) turns.push(middle[i % middle.length]);
    turns.push(check);
    return { name, files, turns, fact: FACT, needle: FACT_NEEDLE, defaultWindow: 128_000 };
  }
  if (name === "tools") {
    const files = { "big.txt": makeTextFile(2, 60_000) };
    const turns = [
      plant,
      { kind: "read", message: msg("Read big.txt.", { steps: [{ read: "big.txt" }], reply: "Read it." }) },
      { kind: "exec", message: msg("Run the report command.", { steps: [{ exec: bigOutputCommand(2000) }], reply: "Ran it." }) },
      { kind: "recover", message: msg("Show me rows 100 to 120 of that output again, exactly.", { steps: [{ plugin: "cachefold_recover", args: recoverArgs }], reply: "Recovered." }) },
      { kind: "text", message: msg("Good. Anything else notable?", { steps: [], reply: "Nothing else." }) },
      check,
    ];
    return { name, files, turns, fact: FACT, needle: FACT_NEEDLE, defaultWindow: 128_000 };
  }
  if (name === "fold") {
    const n = Math.max(3, opts.turns ?? 14);
    const files = {};
    const turns = [plant];
    for (let k = 1; turns.length < n - 1; k++) {
      const f = `notes-${String(k).padStart(2, "0")}.txt`;
      files[f] = makeTextFile(100 + k, 9_000); // under the read shrink threshold (12,000 chars)
      turns.push({
        kind: "work",
        message: msg(`${requirementText(k, 1200)}\nRead ${f} and run the check.`, {
          steps: [{ read: f }, { exec: bigOutputCommand(70, `check${k}`) }], // ~3.2 KB, under the exec threshold (4,000)
          reply: `Batch ${k} reviewed: notes read and checks passed.`,
        }),
      });
    }
    turns.push(check);
    return { name, files, turns, fact: FACT, needle: FACT_NEEDLE, defaultWindow: 48_000 };
  }
  throw new Error(`unknown scenario ${name} (basic|tools|fold)`);
}
