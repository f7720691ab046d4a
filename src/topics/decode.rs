//! Decoding of the segmenter state (see `crate::json`): field names exactly as the derived
//! encoders write them, defaults as serde's (`Segmenter` and `Params` default every field; a
//! `Topic` needs all but its label). Hand-written so the wasm carries no second decoder.

use super::*;
use crate::json::Value;
use crate::json::{json_struct, DResult, DecodeError, FromJson, Via};

impl FromJson for Cause {
    fn from_json(v: Value) -> DResult<Self> {
        match String::from_json(v)?.as_str() {
            "start" => Ok(Cause::Start),
            "local" => Ok(Cause::Local),
            "llm" => Ok(Cause::Llm),
            s => Err(DecodeError::new(format!("unknown cause `{s}`"))),
        }
    }
}

json_struct!(Params default {
    threshold: "threshold",
    window: "window",
    min_topic_turns: "minTopicTurns",
    topic_terms: "topicTerms",
    max_vocab: "maxVocab",
    full_weight_terms: "fullWeightTerms",
    lexical_weight: "lexicalWeight",
    gap_bonus: "gapBonus",
    tool_shift_bonus: "toolShiftBonus",
});

impl FromJson for TopicId {
    fn from_json(v: Value) -> DResult<Self> {
        u32::from_json(v).map(TopicId)
    }
}

impl FromJson for TurnId {
    fn from_json(v: Value) -> DResult<Self> {
        u32::from_json(v).map(TurnId)
    }
}

json_struct!(Topic from (Topic {
    id: TopicId(0),
    first: TurnId(0),
    last: TurnId(0),
    score: 0.0,
    cause: Cause::Start,
    label: None,
    keywords: Vec::new(),
    preview: String::new(),
}) {
    id: "id",
    first: "first",
    last: "last",
    score: "score",
    cause: "cause",
    label: "label",
    keywords: "keywords",
    preview: "preview",
});

/// A key of a map with `u32` keys: its canonical decimal text (no sign, no leading zero).
fn u32_key(k: &str) -> DResult<u32> {
    let b = k.as_bytes();
    let mut n: Option<u32> = (!b.is_empty() && (b[0] != b'0' || b.len() == 1)).then_some(0);
    for &c in b {
        n = n
            .filter(|_| c.is_ascii_digit())
            .and_then(|n| n.checked_mul(10)?.checked_add(u32::from(c - b'0')));
    }
    n.ok_or_else(|| DecodeError::new(format!("key `{k}` is not a u32")))
}

/// A map with `u32` keys, written as a JSON object with decimal keys.
fn u32_map<T: FromJson>(v: Value) -> DResult<VecMap<u32, T>> {
    let mut out = VecMap::new();
    for (k, x) in crate::json::object(v)? {
        out.insert(u32_key(&k)?, T::from_json(x).map_err(|e| e.at(&k))?);
    }
    Ok(out)
}

impl FromJson for Segmenter {
    fn from_json(v: Value) -> DResult<Self> {
        let mut s = Segmenter::default();
        const KEYS: &[(&str, bool)] = &[
            ("params", false),
            ("turns", false),
            ("topics", false),
            ("nextTopic", false),
            ("frozen", false),
            ("df", false),
            ("docs", false),
            ("topicVocab", false),
            ("recent", false),
            ("recentTools", false),
            ("lastUser", false),
            ("lastAtMs", false),
        ];
        crate::json::fill(
            v,
            KEYS,
            &mut [
                &mut s.params,
                &mut s.turns,
                &mut s.topics,
                &mut s.next_topic,
                &mut s.frozen,
                &mut Via(&mut s.df, u32_map),
                &mut s.docs,
                &mut Via(&mut s.topic_vocab, u32_map),
                &mut s.recent,
                &mut s.recent_tools,
                &mut s.last_user,
                &mut s.last_at_ms,
            ],
        )?;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand decoder reads what the derived encoder writes, equal to serde's own reading.
    #[test]
    fn segmenter_round_trips_like_serde() {
        let mut s = Segmenter::new(Params::default());
        for (k, text) in [
            "fix src/a.rs parse_error",
            "new task: docs/b.md install",
            "continue",
        ]
        .iter()
        .enumerate()
        {
            let d = crate::digest::Digest {
                role: "user".into(),
                user_text: Some(text.to_string()),
                text: text.to_string(),
                ..Default::default()
            };
            s.push_turn(TurnInput {
                digests: &[d],
                at_ms: Some(1.0e12 + k as f64 * 4.0e6),
            });
        }
        s.freeze_through(TurnId(1));
        let text = serde_json::to_string(&s).unwrap();
        let ours: Segmenter = crate::json::from_str(&text).unwrap();
        let theirs: Segmenter = serde_json::from_str(&text).unwrap();
        assert_eq!(ours, s);
        assert_eq!(theirs, s);
        let keys: Segmenter =
            crate::json::from_str(r#"{"df":{"0":1,"7":2,"4294967295":3}}"#).unwrap();
        assert_eq!(
            keys.df.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            [0, 7, u32::MAX]
        );
        for bad in [
            r#"{"df":{"x":1}}"#,
            r#"{"df":{"01":1}}"#,
            r#"{"df":{"+1":1}}"#,
            r#"{"df":{"":1}}"#,
            r#"{"df":{"4294967296":1}}"#,
            r#"{"df":{"1 ":1}}"#,
            r#"{"topics":[{"id":1}]}"#,
            r#"{"turns":-1}"#,
        ] {
            assert!(crate::json::from_str::<Segmenter>(bad).is_err(), "{bad}");
        }
    }
}
