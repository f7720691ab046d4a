// The only module that loads the native addon (pkg/cachefold.linux-x64-gnu.node: the replay
// bench behind `openclaw cachefold replay`, built by `npm run build` from the workspace member
// crates/native). The addon is optional: loadNative() never throws; it
// returns { addon: null, reason } when the file is missing, built for another platform, fails to
// load or was built from another version of the crate, and the caller falls back.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const PKG = fileURLToPath(new URL("../pkg/", import.meta.url));
const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The addon's file name for this platform (napi-rs naming), or null where none is built. */
export function addonFile(platform = process.platform, arch = process.arch) {
  // Only linux-x64 (glibc) is built; musl would need its own build (process.report tells).
  if (platform !== "linux" || arch !== "x64") return null;
  return "cachefold.linux-x64-gnu.node";
}

/** How to build the addon from a checkout (what the CLI prints when it is missing). */
export const BUILD_HINT = `npm run build   (in a cachefold checkout; needs Rust: it runs \`cargo build --profile native -p cachefold-native\` and copies target/native/libcachefold_native.so to pkg/${addonFile("linux", "x64")})`;

let cached = null;

/**
 * Load the addon once per process. Returns { addon, path, reason }: `addon` is null when it cannot
 * be used, and `reason` says why. `path` overrides the file (tests).
 */
export function loadNative(path = process.env.CACHEFOLD_NATIVE_ADDON || null) {
  if (cached && cached.key === (path ?? "")) return cached.result;
  const result = tryLoad(path);
  cached = { key: path ?? "", result };
  return result;
}

function tryLoad(override) {
  const name = addonFile();
  const file = override ?? (name ? PKG + name : null);
  if (!file) return { addon: null, path: null, reason: `no native addon is built for ${process.platform}-${process.arch} (only linux-x64)` };
  if (!existsSync(file)) return { addon: null, path: file, reason: `native addon not found at ${file}` };
  let addon;
  try {
    addon = require(file);
  } catch (err) {
    return { addon: null, path: file, reason: `native addon at ${file} failed to load: ${String(err?.message ?? err).split("\n")[0]}` };
  }
  if (typeof addon?.startReplay !== "function" || typeof addon?.listSessions !== "function" || typeof addon?.version !== "function") {
    return { addon: null, path: file, reason: `native addon at ${file} lacks startReplay/listSessions (built from another version? rebuild it)` };
  }
  let want = null;
  try {
    want = require(ROOT + "package.json").version;
  } catch {
    /* no package.json next to js/: nothing to compare */
  }
  const have = addon.version();
  if (want && have !== want) return { addon: null, path: file, reason: `native addon at ${file} was built from cachefold ${have}, this is ${want} (rebuild it)` };
  return { addon, path: file, reason: null };
}
