//! Tests of the tool-output shrink: previews, artifacts, mentions, byte stability.

use super::*;
use serde_json::json;

fn numbered(n: usize, width: usize) -> String {
    (1..=n)
        .map(|i| format!("line {i:05} {}\n", "x".repeat(width)))
        .collect()
}

fn result(tool: &str, text: &str) -> Value {
    json!({"role": "toolResult", "toolCallId": "c1", "toolName": tool, "content": [{"type": "text", "text": text}], "isError": false, "timestamp": 1})
}

fn text0(m: &Value) -> &str {
    m["content"][0]["text"].as_str().unwrap()
}

#[test]
fn thresholds_per_tool_and_default() {
    let cfg = Config::default();
    assert_eq!(threshold_for(&cfg, "read"), 12_000);
    assert_eq!(threshold_for(&cfg, "exec"), 4_000);
    assert_eq!(threshold_for(&cfg, "bash"), 4_000);
    assert_eq!(threshold_for(&cfg, "web_fetch"), 4_000);
    assert_eq!(threshold_for(&cfg, "grep"), 4_000);
    for (tool, limit) in [
        ("read", 12_000usize),
        ("exec", 4_000),
        ("web_fetch", 4_000),
        ("grep", 4_000),
        // Claude Code's spellings: exact lookup, so they take the default threshold.
        ("Read", 4_000),
        ("Grep", 4_000),
        ("Bash", 4_000),
        ("Task", 4_000),
    ] {
        let at = "a".repeat(limit);
        assert!(
            shrink_tool_result(&cfg, tool, &result(tool, &at))
                .unwrap()
                .is_none(),
            "{tool} at threshold"
        );
        let over = "a".repeat(limit + 1);
        let o = shrink_tool_result(&cfg, tool, &result(tool, &over))
            .unwrap()
            .expect(tool);
        assert_eq!(o.original_chars, limit as u64 + 1);
        assert_eq!(o.artifact_text, over);
    }
    let c = Config::from_json(
        r#"{"persist":{"thresholds":{"grep":500},"defaultThreshold":9000,"previewChars":400}}"#,
    )
    .unwrap();
    assert!(
        shrink_tool_result(&c, "grep", &result("grep", &"g".repeat(501)))
            .unwrap()
            .is_some()
    );
    assert!(
        shrink_tool_result(&c, "read", &result("read", &"g".repeat(9000)))
            .unwrap()
            .is_none()
    );
    let off = Config::from_json(r#"{"persist":{"enabled":false}}"#).unwrap();
    assert!(
        shrink_tool_result(&off, "exec", &result("exec", &"g".repeat(90_000)))
            .unwrap()
            .is_none()
    );
}

#[test]
fn header_preview_and_marker() {
    let cfg = Config::default();
    let text = numbered(1_000, 40);
    let o = shrink_tool_result(&cfg, "exec", &result("exec", &text))
        .unwrap()
        .unwrap();
    let t = text0(&o.message);
    let id = artifact_id(&text);
    assert_eq!(o.artifact_id, id);
    let first = t.lines().next().unwrap();
    assert!(
        first.starts_with("[cachefold] exec output 52,000 chars, 1,000 lines → artifact "),
        "{first}"
    );
    assert!(
        first.contains(&format!(
            r#"cachefold_recover {{"id":"{id}","lines":[16,215]}}"#
        )),
        "{first}"
    );
    assert!(
        first.contains("Shown: lines 1-15 and 998-1,000."),
        "{first}"
    );
    // 52-char lines, previewChars 4,000. Head: 15 lines (780 ≤ 800 chars, 20 %); tail: 3
    // lines (156 ≤ 200, 5 %), 998..=1000.
    let body: Vec<&str> = t.lines().skip(1).collect();
    assert_eq!(body[0], text.lines().next().unwrap());
    assert_eq!(body[14], text.lines().nth(14).unwrap());
    // The middle holds no names (its line numbers are bare numbers): no Mentions list.
    assert_eq!(
        body[15],
        "[cachefold] … 982 lines omitted (lines 16-997, 51,064 chars) …"
    );
    assert_eq!(body[16], text.lines().nth(997).unwrap());
    assert_eq!(*body.last().unwrap(), text.lines().last().unwrap());
    assert!(t.ends_with('\n'));
    // Line-snapped: every preview body line is a whole original line or our marker.
    for l in &body {
        assert!(
            l.starts_with("[cachefold] …") || text.lines().any(|x| x == *l),
            "{l}"
        );
    }
    assert_eq!(is_shrunk(t), Some(id));
    // Header + head + marker with Mentions + tail: within 1.2 × previewChars plus the header.
    assert!(t.chars().count() < 4_800 + 500);
}

#[test]
fn mentions_list_exact_names_of_the_omitted_part() {
    let mut text = String::from("start\n");
    for i in 0..400 {
        text.push_str(&format!(
            "line {i}: nothing to see here, just filler text for the preview\n"
        ));
    }
    text.push_str(
        "error[E0308]: mismatched types in src/engine/fold_rules.rs at fn apply_fold_step\n",
    );
    text.push_str("commit 9fceb02d0ae598e95dc970b74767f19372d61af8 by deploy_bot\n");
    for i in 0..400 {
        text.push_str(&format!(
            "tail filler {i} more padding to exceed the threshold comfortably ok\n"
        ));
    }
    let m = result("exec", &text);
    let out = shrink_tool_result(&Config::default(), "exec", &m)
        .unwrap()
        .unwrap();
    let t = text0(&out.message);
    let marker = t.lines().find(|l| l.contains(" omitted (lines ")).unwrap();
    for name in [
        "src/engine/fold_rules.rs",
        "apply_fold_step",
        "9fceb02d0ae598e95dc970b74767f19372d61af8",
        "deploy_bot",
    ] {
        assert!(marker.contains(name), "{name} missing from {marker}");
    }
}

#[test]
fn mentions_list_holds_many_names_of_a_long_middle() {
    // 60 distinct paths (~26 chars each in the list, ~1,560 in all) and a commit hash in the
    // middle of a long output: the list holds all of them (55 % of previewChars = 2,200 chars),
    // not just the first ~800 chars' worth. Paths are listed before identifiers, so the hash and
    // the last paths are the ones a small list drops.
    let filler = "filler text without any names at all, padding only\n";
    let mut text = filler.repeat(120);
    for i in 0..60 {
        text.push_str(&format!("touched src/mod_{i:02}/file_{i:02}.rs\n"));
    }
    text.push_str("commit 9fceb02d0ae598e95dc970b74767f19372d61af8\n");
    text.push_str(&filler.repeat(60));
    let out = shrink_tool_result(&Config::default(), "exec", &result("exec", &text))
        .unwrap()
        .unwrap();
    let t = text0(&out.message);
    let marker = t.lines().find(|l| l.contains(" omitted (lines ")).unwrap();
    let list = marker_mentions(marker);
    for i in [0, 29, 30, 59] {
        let p = format!("src/mod_{i:02}/file_{i:02}.rs");
        assert!(list.contains(&p), "{p} missing from {list}");
    }
    assert!(
        list.contains("9fceb02d0ae598e95dc970b74767f19372d61af8"),
        "hash missing from {list}"
    );
    assert!(list.chars().count() > 800, "{}", list.chars().count());
}

/// The Mentions list of `text` shrunk as an `exec` result under `cfg`.
fn mentions_of(cfg: &Config, text: &str) -> String {
    let out = shrink_tool_result(cfg, "exec", &result("exec", text))
        .unwrap()
        .unwrap();
    let t = text0(&out.message);
    let marker = t.lines().find(|l| l.contains(" omitted (lines ")).unwrap();
    marker_mentions(marker).to_string()
}

#[test]
fn mentions_keep_qualified_names_whole() {
    // Names as the text writes them, not their pieces: the model quotes and greps these.
    let filler = "filler text without any names at all, padding only\n";
    let mut text = filler.repeat(80);
    text.push_str("  assign(state.rows, :rows) in Spotter.Services.TranscriptRenderer\n");
    text.push_str("  see crate::digest::scan and src/engine/fold.rs:120:5 (lib.rs)\n");
    text.push_str(&filler.repeat(80));
    let list = mentions_of(&Config::default(), &text);
    let names: Vec<&str> = list.split(' ').collect();
    for want in [
        "state.rows",
        "Spotter.Services.TranscriptRenderer",
        "crate::digest::scan",
        "src/engine/fold.rs",
        "lib.rs",
    ] {
        assert!(names.contains(&want), "{want} missing from {list}");
    }
    // Plain words never are names, and a qualified name is not cut into pieces.
    for not in ["assign", "filler", "rows", "TranscriptRenderer", "digest"] {
        assert!(!names.contains(&not), "{not} listed in {list}");
    }
}

#[test]
fn mentions_leave_out_names_the_preview_shows() {
    let filler = "filler text without any names at all, padding only\n";
    let mut text = String::from("fn apply_fold_step() calls shown_in_head\n");
    text.push_str(&filler.repeat(80));
    text.push_str("apply_fold_step again, shown_in_tail and only_in_the_middle\n");
    text.push_str(&filler.repeat(80));
    text.push_str("end: shown_in_tail\n");
    let list = mentions_of(&Config::default(), &text);
    assert_eq!(list, "only_in_the_middle");
}

#[test]
fn mentions_rank_recurring_names_first() {
    // A small list (previewChars 400: 380 chars of Mentions) cannot hold the 40 names seen
    // once at the start of the middle; the name that recurs near its end comes first.
    let cfg = Config::from_json(
        r#"{"persist":{"thresholds":{},"defaultThreshold":400,"previewChars":400}}"#,
    )
    .unwrap();
    let filler = "filler text without any names at all, padding only\n";
    let mut text = filler.repeat(10);
    for i in 0..40 {
        text.push_str(&format!("defines once_name_{i:02}\n"));
    }
    for _ in 0..3 {
        text.push_str("calls hot_path_fn(x) and warm_fn\n");
    }
    text.push_str("calls hot_path_fn(y)\n");
    text.push_str(&filler.repeat(10));
    let list = mentions_of(&cfg, &text);
    assert!(
        list.starts_with("hot_path_fn warm_fn once_name_00 once_name_01"),
        "{list}"
    );
    assert!(!list.contains("once_name_39"), "{list}");
    assert!(list.chars().count() <= 380, "{list}");
}

#[test]
fn mentions_leave_out_bare_numbers() {
    // A numbered listing: every line number is seen once, like the names beside it. The list
    // has room for all of them, and still holds only the names: numbers took room that names
    // used better on the replay bench.
    let filler = "filler text without any names at all, padding only\n";
    let mut text = filler.repeat(80);
    for i in 100..140 {
        text.push_str(&format!("{i} defines name_{i} size 4096\n"));
    }
    text.push_str(&filler.repeat(80));
    let list = mentions_of(&Config::default(), &text);
    let names: Vec<&str> = list.split(' ').collect();
    let want: Vec<String> = (100..140).map(|i| format!("name_{i}")).collect();
    assert_eq!(names, want, "{list}");
}

#[test]
fn mentions_use_the_anchor_definition() {
    // The list's names are the bench metric's anchors: an errno-style code in capitals is one
    // (it was not before the two definitions became one), a plain capitalised word is not.
    let filler = "filler text without any names at all, padding only\n";
    let mut text = filler.repeat(80);
    text.push_str("open failed: ENOENT, then EACCES; Error Warning\n");
    text.push_str(&filler.repeat(80));
    assert_eq!(mentions_of(&Config::default(), &text), "ENOENT EACCES");
    for (w, want) in [
        ("ENOENT", true),
        ("Error", false),
        ("src/a.rs", true),
        ("apply_fold", true),
        ("parseClaudeCode", true),
        ("E0308", true),
        ("18789", true),
        ("12", false),
        ("the", false),
    ] {
        assert_eq!(names::is_anchor(w), want, "{w}");
    }
}

#[test]
fn mentions_are_separated_by_one_space() {
    // ", " cost two chars and a token per name; a name never holds a space.
    let filler = "filler text without any names at all, padding only\n";
    let mut text = filler.repeat(80);
    text.push_str("calls alpha_one, then beta_two and src/gamma.rs\n");
    text.push_str(&filler.repeat(80));
    let list = mentions_of(&Config::default(), &text);
    assert_eq!(list, "alpha_one beta_two src/gamma.rs");
}

#[test]
fn previews_trade_head_and_tail_for_mentions() {
    // Every tool's preview keeps a 20 % head and a 5 % tail, and lists up to 95 % of
    // previewChars of names from the middle (command output kept 50 % and 15 %, up to 55 %,
    // before: the exec, bash and Grep cases fail on that split).
    let cfg = Config::default();
    let budget = cfg.persist.preview_chars as usize;
    let mut text = String::new();
    for i in 0..2_000 {
        text.push_str(&format!(
            "    let value_{i:04} = compute_item_{i:04}(input);\n"
        ));
    }
    let parts = |tool: &str| {
        let o = shrink_tool_result(&cfg, tool, &result(tool, &text))
            .unwrap()
            .unwrap();
        let t = text0(&o.message).to_string();
        let body = t.split_once('\n').unwrap().1.to_string();
        let (head, rest) = body.split_once("[cachefold] … ").unwrap();
        let (marker, tail) = rest.split_once('\n').unwrap();
        let list = marker_mentions(marker).to_string();
        (
            head.chars().count(),
            tail.chars().count(),
            list,
            t.chars().count(),
        )
    };
    for tool in ["read", "Read", "exec", "bash", "Grep", "Task"] {
        let (head, tail, list, total) = parts(tool);
        assert!(
            head <= budget / 5 && head > budget / 5 - 100,
            "{tool} head {head}"
        );
        assert!(tail <= budget / 20 && tail > 0, "{tool} tail {tail}");
        let l = list.chars().count();
        assert!(
            l <= budget * 95 / 100 && l > budget * 90 / 100,
            "{tool} list {l}"
        );
        assert!(total <= budget * 6 / 5 + 400, "{tool} total {total}");
    }
}

/// Chars of an omitted-part marker line without its Mentions list.
fn marker_frame(marker: &str) -> usize {
    marker.chars().count() - marker_mentions(marker).chars().count()
}

/// The "Mentions:" list of an omitted-part marker line ("" when it has none).
fn marker_mentions(marker: &str) -> &str {
    marker.split_once(" Mentions: ").map_or("", |(_, m)| m)
}

#[test]
fn deterministic_bytes() {
    let cfg = Config::default();
    let text = numbered(3_000, 17) + "no trailing newline";
    let m = result("exec", &text);
    let a = serde_json::to_string(
        &shrink_tool_result(&cfg, "exec", &m)
            .unwrap()
            .unwrap()
            .message,
    )
    .unwrap();
    let b = serde_json::to_string(
        &shrink_tool_result(&cfg, "exec", &m)
            .unwrap()
            .unwrap()
            .message,
    )
    .unwrap();
    assert_eq!(a, b);
    // Bare middleware result {content, details} gives the same text.
    let bare = json!({"content": [{"type": "text", "text": text}], "details": {"exitCode": 0}});
    let c = shrink_tool_result(&cfg, "exec", &bare).unwrap().unwrap();
    let persisted: Value = serde_json::from_str(&a).unwrap();
    assert_eq!(text0(&c.message), text0(&persisted));
    assert_eq!(c.message["details"], json!({"exitCode": 0}));
}

#[test]
fn already_shrunk_is_left_alone() {
    let cfg = Config::default();
    let text = numbered(500, 30);
    let o = shrink_tool_result(&cfg, "exec", &result("exec", &text))
        .unwrap()
        .unwrap();
    assert!(shrink_tool_result(&cfg, "exec", &o.message)
        .unwrap()
        .is_none());
    let p = process_tool_result(&cfg, "exec", o.message.clone(), true).unwrap();
    assert_eq!(p.action, "none");
    assert_eq!(p.already_shrunk, Some(o.artifact_id));
}

#[test]
fn single_huge_line_uses_char_cuts() {
    let cfg = Config::default();
    let text = "y".repeat(50_000);
    let o = shrink_tool_result(&cfg, "exec", &result("exec", &text))
        .unwrap()
        .unwrap();
    let t = text0(&o.message);
    let first = t.lines().next().unwrap();
    assert!(first.contains(r#""chars":[800,8800]"#), "{first}");
    let body: Vec<&str> = t.lines().skip(1).collect();
    assert_eq!(body[0].len(), 800);
    assert_eq!(body[1], "[cachefold] … 49,000 chars omitted …");
    assert_eq!(body[2].len(), 200);
}

#[test]
fn images_and_unknown_parts_kept_and_not_counted() {
    let cfg = Config::default();
    let img = json!({"type": "image", "data": "A".repeat(100_000), "mimeType": "image/png"});
    let m = json!({"role": "toolResult", "toolName": "read", "content": [img.clone(), {"type": "text", "text": "small"}]});
    assert!(shrink_tool_result(&cfg, "read", &m).unwrap().is_none());
    let big = numbered(400, 40);
    let m = json!({"role": "toolResult", "toolName": "read", "content": [
        {"type": "text", "text": big}, img.clone(), {"type": "hologram", "x": 1}, {"type": "text", "text": "part two"}]});
    let o = shrink_tool_result(&cfg, "read", &m).unwrap().unwrap();
    assert_eq!(o.artifact_text, format!("{big}\npart two"));
    let parts = o.message["content"].as_array().unwrap();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[1], img);
    assert_eq!(parts[2], json!({"type": "hologram", "x": 1}));
    assert!(parts[0]["text"].as_str().unwrap().ends_with("part two"));
}

#[test]
fn string_content_and_odd_shapes() {
    let cfg = Config::default();
    let big = numbered(300, 40);
    let m = json!({"role": "toolResult", "toolName": "exec", "content": big});
    let o = shrink_tool_result(&cfg, "", &m).unwrap().unwrap();
    assert_eq!(o.tool_name, "exec");
    assert!(o.message["content"]
        .as_str()
        .unwrap()
        .starts_with("[cachefold] exec output"));
    for odd in [
        json!({"role": "assistant", "content": big}),
        json!({"role": "toolResult", "content": {"weird": big}}),
        json!({"role": "toolResult", "content": [{"type": "text", "text": 5}]}),
        json!({"role": "toolResult"}),
    ] {
        assert!(
            shrink_tool_result(&cfg, "exec", &odd).unwrap().is_none(),
            "{odd}"
        );
    }
    assert_eq!(
        shrink_tool_result(&cfg, "exec", &json!([1]))
            .unwrap_err()
            .code(),
        "CACHEFOLD_INPUT"
    );
}

#[test]
fn multibyte_text_counts_chars_not_bytes() {
    let cfg = Config::default();
    // 3,000 chars, 9,000 bytes: under exec's 4,000-char threshold.
    let m = result("exec", &"語".repeat(3_000));
    assert!(shrink_tool_result(&cfg, "exec", &m).unwrap().is_none());
    // Same with two parts: the message must come back unchanged.
    let m2 = json!({"role": "toolResult", "content": [{"type": "text", "text": "語\n語".repeat(700)}, {"type": "text", "text": "é".repeat(1_000)}]});
    let p = process_tool_result(&cfg, "exec", m2.clone(), true).unwrap();
    assert_eq!(p.action, "none");
    assert!(p.message.is_none());
    let o = shrink_tool_result(&cfg, "exec", &result("exec", &"語\n".repeat(2_500)))
        .unwrap()
        .unwrap();
    assert_eq!(o.original_chars, 5_000);
    assert!(text0(&o.message).is_char_boundary(0));
}

#[test]
fn own_tools_never_shrunk() {
    let cfg = Config::default();
    let big = format!(
        "[cachefold_recover] artifact x lines 1-900\n{}",
        numbered(900, 20)
    );
    assert!(shrink_tool_result(
        &cfg,
        "cachefold_recover",
        &result("cachefold_recover", &big)
    )
    .unwrap()
    .is_none());
    let wrapped = format!(
        r#"{{"tool":{{"id":"openclaw:cachefold:cachefold_recover"}},"result":{{"content":[{{"type":"text","text":{}}}]}}}}"#,
        serde_json::to_string(&big).unwrap()
    );
    assert!(
        shrink_tool_result(&cfg, "tool_call", &result("tool_call", &wrapped))
            .unwrap()
            .is_none()
    );
}

#[test]
fn details_compacted_only_when_oversized() {
    let cfg = Config::default();
    let m = json!({"role": "toolResult", "toolName": "exec", "content": [{"type": "text", "text": "ok"}], "details": {"aggregated": "z".repeat(20_000), "exitCode": 0}});
    let p = process_tool_result(&cfg, "exec", m.clone(), true).unwrap();
    assert_eq!(p.action, "details");
    let d = &p.message.as_ref().unwrap()["details"];
    assert_eq!(d["exitCode"], 0);
    assert!(serde_json::to_string(d).unwrap().len() <= 4_096);
    let p = process_tool_result(&cfg, "exec", m, false).unwrap();
    assert_eq!(p.action, "none");
}

#[test]
fn id_validation() {
    assert!(validate_artifact_id(&artifact_id("x")).is_ok());
    for bad in [
        "../x",
        "/etc/passwd",
        "A9993E364706816ABA3E25717850C26C9CD0D89D",
        "a9993e364706816aba3e25717850c26c9cd0d89",
        "a9993e364706816aba3e25717850c26c9cd0d89d0",
        "a9993e364706816aba3e25717850c26c9cd0d8/d",
        "a9993e364706816aba3e25717850c26c9cd0d8éd",
        "a9993e364706816aba3e25717850c26c9cd0d8\0d",
        "",
        "..",
    ] {
        assert_eq!(
            validate_artifact_id(bad).unwrap_err().code(),
            "CACHEFOLD_INVALID_ID",
            "{bad:?}"
        );
    }
    assert_eq!(
        artifact_id("abc"),
        "a9993e364706816aba3e25717850c26c9cd0d89d"
    );
}

#[test]
fn grouping() {
    assert_eq!(group(0), "0");
    assert_eq!(group(999), "999");
    assert_eq!(group(1_000), "1,000");
    assert_eq!(group(48_213), "48,213");
    assert_eq!(group(104_857_600), "104,857,600");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
    /// Preview = exact head prefix + marker + exact tail suffix, both line-snapped unless a
    /// single line is longer than its budget; omitted counts add up; same input, same bytes.
    #[test]
    fn preview_reassembles(lines in proptest::collection::vec("[a-zé語 _.0-9]{0,120}", 1..300), trailing_nl: bool, preview in 200u64..2_000, read: bool) {
        let tool = if read { "read" } else { "x" };
        let pct = SHARES;
        let mut text = lines.join("\n");
        if trailing_nl { text.push('\n'); }
        let threshold = preview;
        let cfg = Config::from_json(&format!(r#"{{"persist":{{"defaultThreshold":{threshold},"previewChars":{preview},"thresholds":{{}}}}}}"#)).unwrap();
        let m = result(tool, &text);
        let out = shrink_tool_result(&cfg, tool, &m).unwrap();
        let chars = text.chars().count() as u64;
        proptest::prop_assert_eq!(out.is_some(), chars > threshold);
        let Some(o) = out else { return Ok(()) };
        proptest::prop_assert_eq!(&o.artifact_text, &text);
        let again = shrink_tool_result(&cfg, tool, &m).unwrap().unwrap();
        proptest::prop_assert_eq!(serde_json::to_string(&again.message).unwrap(), serde_json::to_string(&o.message).unwrap());
        let t = text0(&o.message).to_string();
        proptest::prop_assert_eq!(is_shrunk(&t), Some(artifact_id(&text)));
        let body = &t[t.find('\n').unwrap() + 1..];
        let mpos = body.find("\n[cachefold] … ").map(|p| p + 1).or_else(|| body.starts_with("[cachefold] … ").then_some(0)).unwrap();
        let head = &body[..mpos];
        let after = &body[mpos..];
        let tail = &after[after.find('\n').unwrap() + 1..];
        // The renderer adds one '\n' after a head that was cut mid-line: a cut head holds exactly
        // the budget, a line-snapped one at most the budget (a first line of exactly the budget
        // followed by '\n' renders the same either way, and is the cut reading).
        let head_budget = preview as usize * pct.head / 100;
        let head_text = if text.starts_with(head) && head.chars().count() <= head_budget { head } else { head.strip_suffix('\n').unwrap() };
        proptest::prop_assert!(text.starts_with(head_text));
        proptest::prop_assert!(text.ends_with(tail));
        let tail_budget = preview as usize * pct.tail / 100;
        proptest::prop_assert!(head_text.chars().count() <= head_budget);
        proptest::prop_assert!(tail.chars().count() <= tail_budget);
        // Bounded: the marker's Mentions list stays within its share of previewChars, and the
        // whole preview within 1.2 × previewChars plus the header and marker lines.
        let mentions = marker_mentions(after.split('\n').next().unwrap());
        proptest::prop_assert!(mentions.chars().count() <= preview as usize * pct.mentions / 100, "{}", mentions);
        proptest::prop_assert!(pct.head + pct.tail + pct.mentions <= 120);
        let frame = t.split('\n').next().unwrap().chars().count() + marker_frame(after.split('\n').next().unwrap());
        proptest::prop_assert!(t.chars().count() <= preview as usize * 6 / 5 + frame + 2);
        let omitted = chars - head_text.chars().count() as u64 - tail.chars().count() as u64;
        let marker = after.split('\n').next().unwrap();
        proptest::prop_assert!(marker.contains(&format!("{} chars", group(omitted))), "{} vs {}", marker, omitted);
        // Line-snapped whenever the text has a line break inside each budget.
        let head_budget_text: String = text.chars().take(head_budget).collect();
        if head_budget_text.contains('\n') { proptest::prop_assert!(head_text.ends_with('\n')); }
        let rev: String = text.chars().rev().take(tail_budget + 1).collect();
        if rev.chars().skip(1).any(|c| c == '\n') && !tail.is_empty() {
            let start = text.len() - tail.len();
            proptest::prop_assert!(start == 0 || text.as_bytes()[start - 1] == b'\n');
        }
    }
}

#[test]
fn tail_and_head_boundaries() {
    let s = "ab\ncd\nef\n";
    assert_eq!(head_end(s, 4), 3);
    assert_eq!(head_end(s, 100), s.len());
    assert_eq!(head_end("abcdef", 3), 3);
    assert_eq!(tail_start(s, 4), 6); // "ef\n"
    assert_eq!(tail_start("abcdef", 2), 4);
    assert_eq!(tail_start(s, 100), 0);
    assert_eq!(count_lines(""), 0);
    assert_eq!(count_lines("a"), 1);
    assert_eq!(count_lines("a\n"), 1);
    assert_eq!(count_lines("a\nb"), 2);
}
