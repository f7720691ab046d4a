// Result types of the wasm exports (src/wasm.rs): the JSON shapes of the Rust types they
// serialise, camelCase, `null` for `None`.

/** The plugin config with every default filled in (openclaw.plugin.json#configSchema). */
export interface CachefoldConfig {
  mode: "auto" | "always" | "off";
  targetModels: string[];
  prefixLockCount: number;
  compactRatio: number;
  tokenBudget: number;
  tailTokens: number;
  minFoldTokens: number;
  foldRecordBudget: number;
  expectedRemainingCalls: number;
  price: string;
  prices: Record<string, { hit: number; miss: number; output: number }>;
  providers: Record<string, Record<string, unknown>>;
  summary: Record<string, unknown>;
  protectedReads: string[];
  toolDefaults: Record<string, Record<string, unknown>>;
  persist: Record<string, unknown>;
  artifacts: { maxBytes: number };
  stateDir: string;
  logFile: string;
  ownsCompaction: boolean;
  lessons: Record<string, unknown>;
  topics: Record<string, unknown>;
  profile: "savings" | "balanced" | "recall";
}

/** `{text, details}` of a tool answer (`cachefold_recover`, `cachefold_topics`, ...). */
export interface ToolAnswer {
  text: string;
  details: Record<string, unknown>;
}

export interface RecoverTarget {
  kind: "artifact" | "fold" | "condensed" | "turn" | "topic";
  id: string;
}

export interface SearchHit {
  id: string;
  kind: string;
  line: number;
  snippet: string;
}

export interface SearchAnswer {
  text: string;
  hits: SearchHit[];
  more: boolean;
}

export interface LessonDecision {
  classification: LessonClassification;
  inject: boolean;
  reason: string;
  text: string;
  tokens: number;
  chosen: string[];
  overBudget: string[];
  stale: { name: string; scope: string; changed: { entry: string; what: string }[]; refresh: string }[];
  invalid: { scope: string; file: string; error: string }[];
}

/** Where the messages of a turn or topic are stored (`cachefold_recover` of `t<k>`/`T<n>`). */
export interface RecoverPlan {
  [key: string]: unknown;
}

/** The session's counters, prices and state (`cachefold_stats`, `/cachefold`). */
export interface SessionStats {
  sessionId: string;
  [key: string]: unknown;
}

/** One recent model call with its price. */
export interface CallRow {
  [key: string]: unknown;
}

export interface LlmPrompt {
  system: string;
  prompt: string;
  maxTokens: number;
}

export interface AssemblePlan {
  order: number[];
  /** "" where the key is one the caller said it holds (the header's `known`). */
  synthetic: string[];
  /** The key of each `synthetic` text; absent when the plan gives none. */
  syntheticKeys?: string[];
  estimatedTokens: number;
  needFull: boolean;
  passthrough: boolean;
  foldWrites: FoldWrite[];
  report: AssembleReport;
}
export interface AssembleReport {
  managed: boolean;
  pinned: boolean;
  headLen: number;
  liveFrom: number;
  count: number;
  ingested: number;
  missing: number[];
  divergence: DivergenceReport | null;
  envChanges: string[];
  fold: FoldReport | null;
  folds: FoldReport[];
  condensed: CondenseReport | null;
  emergency: boolean;
  forced: boolean;
  overBudget: boolean;
  warning?: string | null;
  tokensBefore: number;
  tokensAfter: number;
  thresholdTokens: number;
  budgetTokens: number;
  stablePrefix: number | null;
  repairs: RepairReport[];
  skipped: string | null;
  breakerTripped: boolean;
  quarantined?: QuarantineReport[];
}
export interface FoldWrite {
  foldId: string;
  from: number;
  to: number;
}
export interface DivergenceReport {
  at: number;
  cause: string;
  action: string;
  found: (number | null)[];
}
export interface FoldReport {
  id: string;
  from: number;
  to: number;
  reason: string;
  protected: number;
  recordTokens: number;
  foldedTokens: number;
  tokensBefore: number;
  tokensAfter: number;
  usedSummary: boolean;
  summary: string;
  decision: Record<string, unknown>;
  priceKey: string;
  expectedCalls: number;
}
export interface CondenseReport {
  id: string;
  merged: number;
  recordsTokensBefore: number;
  recordTokens: number;
  tokensBefore: number;
  tokensAfter: number;
  decision: Record<string, unknown>;
}
export interface RepairReport {
  kind: string;
  callId: string;
  position: number;
}
export interface QuarantineReport {
  index: number;
  reason: string;
  hash: string;
}
export interface CommitOutcome {
  status: string;
}
export interface SummaryRequest {
  id: string;
  from: number;
  to: number;
  system: string;
  prompt: string;
  maxTokens: number;
  timeoutMs: number;
}
export interface TopicRequest {
  id: string;
  turn: string;
  system: string;
  prompt: string;
  maxTokens: number;
  timeoutMs: number;
}
export interface CompactAnswer {
  pending: boolean;
  tokensBefore: number;
  tokensAfter: number;
  hostThreshold: number | null;
  fits: boolean;
  alreadyCompacted: boolean;
  reason: string | null;
  summary: string | null;
}
export interface ReplayReport {
  applied: number;
  skipped: number;
  ignoredBytes: number;
  stopped?: string | null;
  seq: number;
}
export interface ProcessedToolResult {
  action: string;
  /** The rewritten message as JSON text, `null` when nothing changed. */
  messageJson: string | null;
  artifactId: string | null;
  /** The whole tool output when shrunk (a JS string beside the JSON result). */
  artifactText?: string | null;
  originalChars: number | null;
  originalLines: number | null;
  shrunkChars: number | null;
  detailsCompacted: boolean;
  toolName: string;
  alreadyShrunk: string | null;
}
export interface Lesson {
  name: string;
  description: string;
  fingerprint: string[];
  capturedAt: string;
  fingerprintHash: string;
  fingerprintParts: string[];
  session: string;
  turn: string;
  refreshOf: string;
  body: string[];
}
export interface LessonStaleness {
  stale: boolean;
  changed: { entry: string; what: string }[];
}
export interface LessonClassification {
  class: "code-gen" | "exploration" | "qa" | "other";
  confident: boolean;
  scores: [number, number, number, number];
  signals: string[];
}
/** The knobs a profile fills in (config/profile.rs). */
/** The plugin config resolved key by key (`resolveConfig`). */
export interface ResolvedConfig {
  config: CachefoldConfig;
  problems: ConfigProblem[];
}
/** One problem of the plugin config: the key, the value written there and the logged sentence. */
export interface ConfigProblem {
  key: string;
  value?: unknown;
  /** The key is not in the schema (it is left out). */
  unknown?: true;
  /** For an unknown key: the nearest valid key, null when none is near. */
  nearest?: string | null;
  message: string;
}
export interface ProfileKnobs {
  tailTokens: number;
  minFoldTokens: number;
  foldRecordBudget: number;
  persist: { previewChars: number; defaultThreshold: number; thresholds: Record<string, number> };
}
/** A session that gets no lessons, decided before any lesson file is read. */
export interface LessonGate {
  reason: string;
  classification: LessonClassification | null;
}

// --- charts (src/chart): what `chartSvg` draws; the x axis is the call index, 1-based ---
export interface ChartSeries {
  name: string;
  /** One value per call (a null leaves a gap). */
  values: (number | null)[];
  /** Drawn last, solid and wider. */
  headline?: boolean;
  /** Palette entry 0..7 (`.cf-s<n>` in `chartCss()`); by default the series' position. */
  color?: number;
  /** Lines: a step per call. */
  step?: boolean;
  /** Bars: the `data-<key>` attribute carrying the value on each call's group. */
  key?: string;
}
export interface ChartMark {
  kind: "fold" | "break" | "session";
  /** In call units: `c + 0.5` is between call c and call c+1. */
  at: number;
  label: string;
  detail?: string;
}
export interface ChartSpec {
  title: string;
  xTitle: string;
  yTitle: string;
  yUnit?: "usd" | "tokens" | "count";
  /** Stacked, bottom first. */
  bars?: ChartSeries[];
  lines?: ChartSeries[];
  marks?: ChartMark[];
  width?: number;
  height?: number;
  /** A document for a file: heading, background, stylesheet. */
  standalone?: boolean;
  noLegend?: boolean;
}
