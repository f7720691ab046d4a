// A turn loop against one session, run as a child process by the fault campaign
// (tests/faults/campaign.test.mjs), which kills it at random moments.
//
// argv[2] = JSON {stateDir, sessionId, start, count, keyPrefix, assemble}
// stdout, one line each: "ready", "A <k> <hash,hash,...>" (assemble output of turn k, one short
// hash per message), "C <key> <status>" (commitTurn answered), "done".
import { writeSync } from "node:fs";
import plugin from "../../js/index.js";
import { history, turn, MODEL, shortHash } from "./turns.mjs";

const opts = JSON.parse(process.argv[2]);
const say = (line) => writeSync(1, `${line}\n`); // synchronous: a line printed is a line the parent sees
let factory;
plugin.register({
  pluginConfig: { stateDir: opts.stateDir, logFile: opts.logFile, minFoldTokens: 1e9, tokenBudget: 1e9 },
  logger: { info() {}, warn() {}, error: (m) => process.stderr.write(`${m}\n`) },
  registerContextEngine: (_id, f) => (factory = f),
  on() {},
  registerTool() {},
  registerAgentToolResultMiddleware() {},
});
say("ready");
for (let k = opts.start; k < opts.start + opts.count; k++) {
  const engine = await factory({}); // one engine per turn, as OpenClaw does
  if (opts.assemble) {
    const msgs = history(k);
    const r = await engine.assemble({ sessionId: opts.sessionId, messages: msgs, model: MODEL, tokenBudget: 1e9 });
    say(`A ${k} ${r.messages.map(shortHash).join(",")}`);
  }
  const c = await engine.commitTurn({ sessionId: opts.sessionId, advancementKey: `${opts.keyPrefix}${k}`, messages: turn(k) });
  say(`C ${opts.keyPrefix}${k} ${c.status}`);
}
say("done");
