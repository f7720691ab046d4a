//! The segmenter state's JSON form: what the derived encoders write, the derived decoders read
//! back (`Segmenter` and `Params` default every field; a `Topic` needs all but its label).

#[cfg(test)]
mod tests {
    use super::super::*;
    /// The decoder reads back what the encoder writes; map keys are canonical `u32` text.
    #[test]
    fn segmenter_round_trips() {
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
                user_text: Some((*text).into()),
                text: (*text).into(),
                ..Default::default()
            };
            s.push_turn(TurnInput {
                digests: &[d],
                at_ms: Some(1.0e12 + k as f64 * 4.0e6),
            });
        }
        s.freeze_through(TurnId(1));
        let text = serde_json::to_string(&s).unwrap();
        let back: Segmenter = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
        let keys: Segmenter =
            serde_json::from_str(r#"{"df":{"0":1,"7":2,"4294967295":3}}"#).unwrap();
        assert_eq!(
            keys.df.keys().copied().collect::<Vec<_>>(),
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
            assert!(serde_json::from_str::<Segmenter>(bad).is_err(), "{bad}");
        }
    }
}
