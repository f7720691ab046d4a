//! Decoding of snapshots and journal state types (see `crate::json`): field names exactly as
//! the derived encoders write them, defaults as before.

#[allow(unused_imports)]
use super::*;

impl FromJson for ShapeRole {
    fn from_json(v: Value) -> DResult<Self> {
        match String::from_json(v)?.as_str() {
            "user" => Ok(ShapeRole::User),
            "assistant" => Ok(ShapeRole::Assistant),
            "toolResult" => Ok(ShapeRole::ToolResult),
            "other" => Ok(ShapeRole::Other),
            s => Err(DecodeError::new(format!("unknown role `{s}`"))),
        }
    }
}

json_struct!(Shape default {
    role: "role",
    call_ids: "callIds",
    result_id: "resultId",
    tool_name: "toolName",
    call_names: "callNames",
});

json_struct!(Digest default {
    role: "role",
    text: "text",
    files: "files",
    commands: "commands",
    errors: "errors",
    identifiers: "identifiers",
    artifacts: "artifacts",
    user_text: "userText",
    tool_name: "toolName",
    call_ids: "callIds",
    result_id: "resultId",
    protected: "protected",
});

json_struct!(MsgRecord {
    h: "h",
    w: "w",
    shape: "shape",
    ts: "ts",
    protected: "protected" = default,
    digest: "digest",
    q: "q",
});

json_struct!(CallArg {
    id: "id",
    name: "name",
    args: "args",
});

json_struct!(Segment {
    id: "id",
    from: "from",
    to: "to",
    protected: "protected",
    json: "json",
    key: "key",
    w: "w",
    protected_w: "protectedW",
    covers: "covers",
    summary: "summary" = default,
});

impl FromJson for OutKey {
    fn from_json(v: Value) -> DResult<Self> {
        let (k, w) = <(String, u64)>::from_json(v)?;
        Ok(OutKey(k, w))
    }
}

json_struct!(CallRow {
    at: "at",
    model: "model",
    input: "input",
    cache_read: "cacheRead",
    cache_write: "cacheWrite",
    output: "output",
    predicted: "predicted",
});

json_struct!(Totals default {
    calls: "calls",
    input: "input",
    cache_read: "cacheRead",
    cache_write: "cacheWrite",
    output: "output",
    predicted: "predicted",
    predicted_abs_err: "predictedAbsErr",
    cost_usd: "costUsd",
    uncached_usd: "uncachedUsd",
});

json_struct!(Counters default {
    folds: "folds",
    priced_folds: "pricedFolds",
    emergency_folds: "emergencyFolds",
    compact_folds: "compactFolds",
    folded_w: "foldedW",
    folded_tokens: "foldedTokens",
    condenses: "condenses",
    repairs: "repairs",
    repins: "repins",
    divergences: "divergences",
    artifacts: "artifacts",
    summaries_requested: "summariesRequested",
    summaries_ok: "summariesOk",
    summaries_failed: "summariesFailed",
    summaries_used: "summariesUsed",
});

json_struct!(TurnAcc default {
    shared: "shared",
    first_w: "firstW",
});

json_struct!(PendingSummary {
    id: "id",
    from: "from",
    to: "to",
    at: "at",
});

json_struct!(ReadySummary {
    id: "id",
    from: "from",
    to: "to",
    text: "text",
});

json_struct!(ArtifactNote {
    id: "id",
    tool: "tool",
    chars: "chars",
    at: "at",
});

json_struct!(CalibGuard default {
    lo: "lo",
    hi: "hi",
    last: "last",
});

json_struct!(DivergenceNote {
    at: "at",
    cause: "cause",
    action: "action",
});

json_struct!(SessionState from (SessionState::new("")) {
    v: "v",
    seq: "seq",
    session_id: "sessionId",
    model: "model",
    spa: "spa",
    records: "records",
    pinned: "pinned",
    head_len: "headLen",
    head_fp: "headFp",
    segs: "segs",
    live_from: "liveFrom",
    open_calls: "openCalls",
    out: "out",
    req: "req",
    turn: "turn",
    calibration: "calibration",
    calib_guard: "calibGuard" = default,
    commit_keys: "commitKeys",
    rows: "rows",
    totals: "totals",
    counters: "counters",
    breaker_low: "breakerLow",
    pending_summary: "pendingSummary",
    ready_summary: "readySummary",
    summary_times: "summaryTimes",
    artifacts: "artifacts",
    force_fold: "forceFold",
    last_divergence: "lastDivergence",
    turn_ws: "turnWs" = default,
    window: "window",
    budget: "budget",
    base: "base" = default,
    skip: "skip" = default,
    head_json: "headJson" = default,
    topics: "topics" = default,
});

json_struct!(TopicState default {
    seg: "seg",
    starts: "starts",
    pins: "pins",
    last_margin: "lastMargin",
    llm_turn: "llmTurn",
    llm_times: "llmTimes",
    llm_pending: "llmPending",
    llm_ok: "llmOk",
    llm_failed: "llmFailed",
    llm_malformed: "llmMalformed",
});

json_struct!(TopicPending {
    id: "id",
    turn: "turn",
    at: "at",
});

impl SessionState {
    /// Read a snapshot (the JSON text of a state).
    pub fn from_snapshot(text: &str) -> DResult<SessionState> {
        crate::json::from_str(text)
    }
}
