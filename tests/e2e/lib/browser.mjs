// Headless Chromium for the dashboard test: Debian's /usr/bin/chromium (`.ci/setup browser`)
// driven by playwright-core with that executable, a fresh profile per launch, no network of its
// own (no component updates, sync or QUIC) and nothing downloaded at run time.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const CHROMIUM = process.env.CACHEFOLD_CHROMIUM ?? "/usr/bin/chromium";

export const CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/** Why the browser test cannot run here, or null when it can. */
export async function browserProblem() {
  if (!fs.existsSync(CHROMIUM)) return `no ${CHROMIUM} (run: bash .ci/setup browser)`;
  try {
    await import("playwright-core");
  } catch (err) {
    return `playwright-core is not installed (npm ci): ${err?.message ?? err}`;
  }
  return null;
}

/**
 * Launch Chromium with a fresh profile (--user-data-dir, a temp dir removed on close); returns
 * {context, close}. playwright-core passes the profile through launchPersistentContext.
 */
export async function launchBrowser() {
  const { chromium } = await import("playwright-core");
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "cf-chromium-"));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, timeout: 60_000, viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * A new page that records console errors, page errors and failed requests (`problems`).
 * `colorScheme`: "light" | "dark"; `viewport`: {width, height}; `headers`: extra HTTP headers
 * (this page's requests only).
 */
export async function openPage(context, { colorScheme = "light", viewport = { width: 1280, height: 900 }, headers = null } = {}) {
  const page = await context.newPage();
  const problems = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e?.message ?? e}`));
  page.on("requestfailed", (r) => problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText ?? ""}`));
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  await page.emulateMedia({ colorScheme });
  await page.setViewportSize(viewport);
  if (headers) await page.setExtraHTTPHeaders(headers);
  return { page, problems };
}
