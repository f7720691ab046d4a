use cachefold::config::Config;
use cachefold::replay::*;
use cachefold::transcript::parse_auto;
#[test]
fn dbg() {
    for f in ["../shared/corpus/claude-code-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", "../shared/corpus/pi-mono/large-session.jsonl"] {
    let text = std::fs::read_to_string(f).unwrap();
    let t = parse_auto(f, &text).unwrap();
    let opts = ReplayOptions { model: Some("deepseek/deepseek-v4-flash".into()), check: false, check_journal: false, ..Default::default() };
    let out = replay(&t.messages, &t.calls, &Config::default(), &opts);
    println!("{}", serde_json::to_string_pretty(&out.stats).unwrap());
    for c in out.calls.iter().take(12) { let u = t.calls.iter().find(|x| x.assistant_index == c.assistant_index).unwrap().usage; println!("a={} hist={:?} est={} pw={} usage={:?}", c.assistant_index, c.history, c.estimated_tokens, c.prompt_w, u); }
    for c in out.calls.iter().filter(|c| c.report.as_ref().is_some_and(|r| !r.folds.is_empty() || r.condensed.is_some())).take(8) { let r = c.report.as_ref().unwrap(); for f in &r.folds { println!("fold {} {}..{} {} rec={} folded={} before={} after={} be={:.1} exp={}", f.id, f.from, f.to, f.reason, f.record_tokens, f.folded_tokens, f.tokens_before, f.tokens_after, f.decision.break_even_calls, f.expected_calls);} if let Some(cd) = &r.condensed { println!("condense {} merged={} recs={} -> {}", cd.id, cd.merged, cd.records_tokens_before, cd.record_tokens); } }
    }
}
