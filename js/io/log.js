// The decision log (`logFile`): one JSON line per event, appended, best effort.
import { closeSync, openSync } from "node:fs";
import { FILE_MODE, writeAll } from "./files.js";

/** Append one JSON line to the decision log (never throws: logging must never break a turn). */
export function logLine(file, obj) {
  if (!file) return;
  try {
    const fd = openSync(file, "a", FILE_MODE);
    try {
      writeAll(fd, `${JSON.stringify({ at: new Date().toISOString(), ...obj })}\n`);
    } finally {
      closeSync(fd);
    }
  } catch {
    /* dropped */
  }
}
