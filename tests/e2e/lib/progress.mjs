// Time limits from progress, not from wall-clock guesses.
//
// A harness step (a Gateway start, a turn, the host's post-turn work) may take minutes on a busy
// machine, and that is fine as long as something moves: the provider receives a request, the
// Gateway sends an event or writes a log line, the plugin writes a decision. `Progress#wait`
// fails a step only when none of its signals has moved for `stallMs`, with a message that names
// the step and what was seen last; `maxMs` is a backstop against a step that keeps a signal
// moving forever. The watchdog is a live timer, so a waiting step always keeps the event loop
// alive: a hang ends as this error, never as a test left pending.

import fs from "node:fs";

export const STALL_MS = Number(process.env.CACHEFOLD_E2E_STALL_MS ?? 120_000);

export class Progress {
  /**
   * @param {{files?: () => string[], counters?: () => number[], describe?: () => string}} o
   *   files: paths whose size is a progress signal (logs); counters: numbers that grow
   *   (provider requests, Gateway events); describe: what was seen last, for the error.
   */
  constructor(o = {}) {
    this.o = o;
    this.ticks = 0;
  }

  /** Something moved (called by event sources that push). */
  tick() {
    this.ticks++;
  }

  signature() {
    const sizes = (this.o.files?.() ?? []).map((f) => {
      try {
        return fs.statSync(f).size;
      } catch {
        return -1;
      }
    });
    return [this.ticks, ...sizes, ...(this.o.counters?.() ?? [])].join("/");
  }

  /**
   * Resolve with `promise`, or reject when no signal moved for `stallMs` (or after `maxMs`).
   * `check()` (optional) runs at every poll and may throw to end the wait early (a process died).
   */
  wait(promise, step, { stallMs = STALL_MS, maxMs = 30 * 60_000, everyMs = 250, check } = {}) {
    const t0 = Date.now();
    let sig = this.signature();
    let since = t0;
    let timer;
    const watchdog = new Promise((_, reject) => {
      timer = setInterval(() => {
        try {
          check?.();
        } catch (e) {
          reject(e);
          return;
        }
        const now = this.signature();
        if (now !== sig) {
          sig = now;
          since = Date.now();
        }
        const idle = Date.now() - since;
        if (idle >= stallMs || Date.now() - t0 >= maxMs) {
          const why = idle >= stallMs ? `no progress for ${Math.round(idle / 1000)} s` : `still moving after ${Math.round(maxMs / 1000)} s`;
          reject(new Error(`${step}: ${why} (${Math.round((Date.now() - t0) / 1000)} s in step${this.o.describe ? `; ${this.o.describe()}` : ""})`));
        }
      }, everyMs);
    });
    return Promise.race([promise, watchdog]).finally(() => clearInterval(timer));
  }
}
