// The Gateway's JSONL file log, read incrementally, for what the host says about its own work.
//
// OpenClaw 2026.9.6 runs optional maintenance after every Gateway reply (the pre-compaction
// memory flush, then compaction), under a "maintenance owner" per session key, and at debug level
// logs each owner's lifecycle (agents/session-maintenance, `session maintenance lifecycle`):
//   {"event":"session_maintenance","phase":"pending"|"started"|"settled"|…,"sessionKey","maintenanceId",
//    "lifecycleGeneration"}
// A turn's post-turn work has landed when the owner created after that turn is `settled`. An
// owner is a (lifecycleGeneration, maintenanceId) pair: a restarted Gateway has a new generation
// and counts its ids from 0 again.
// (A new message cancels that work, so a script must wait for it, as a user reading the reply
// gives it its time.)

import fs from "node:fs";

export class HostLogTail {
  constructor(file) {
    this.file = file;
    this.offset = 0;
    this.rest = "";
    /** sessionKey → Map(maintenanceId → [phases]) */
    this.maintenance = new Map();
    this.records = 0;
  }

  /** Read what was appended since the last call. */
  poll() {
    let fd;
    try {
      fd = fs.openSync(this.file, "r");
    } catch {
      return;
    }
    try {
      const size = fs.fstatSync(fd).size;
      if (size < this.offset) this.offset = 0; // replaced
      if (size === this.offset) return;
      const buf = Buffer.alloc(size - this.offset);
      fs.readSync(fd, buf, 0, buf.length, this.offset);
      this.offset = size;
      const lines = (this.rest + buf.toString("utf8")).split("\n");
      this.rest = lines.pop();
      for (const line of lines) this.take(line);
    } finally {
      fs.closeSync(fd);
    }
  }

  take(line) {
    if (!line.includes("session_maintenance")) return;
    let rec;
    try {
      rec = JSON.parse(line);
    } catch {
      return;
    }
    const m = Object.values(rec).find((v) => v && typeof v === "object" && v.event === "session_maintenance");
    if (!m || typeof m.sessionKey !== "string") return;
    this.records++;
    if (!this.maintenance.has(m.sessionKey)) this.maintenance.set(m.sessionKey, new Map());
    const byId = this.maintenance.get(m.sessionKey);
    // Ids count from 0 again in each Gateway process: the owner is the pair.
    const id = `${m.lifecycleGeneration ?? ""}#${m.maintenanceId}`;
    if (!byId.has(id)) byId.set(id, []);
    byId.get(id).push(m.phase);
  }

  /** Maintenance ids of a session key seen so far (a mark taken before a turn). */
  seen(sessionKey) {
    this.poll();
    return new Set(this.maintenance.get(sessionKey)?.keys() ?? []);
  }

  /** Owners of `sessionKey` not in `mark`: [{id, phases, settled}]. */
  since(sessionKey, mark) {
    this.poll();
    return [...(this.maintenance.get(sessionKey) ?? new Map()).entries()].filter(([id]) => !mark.has(id)).map(([id, phases]) => ({ id, phases, settled: phases.includes("settled") }));
  }
}
