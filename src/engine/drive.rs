//! The one plan driver: `need(count)` → assemble with those indices → on `needFull`, again with
//! every index. The shim, the replay, the bench and the tests all plan through [`Session::drive`],
//! so the protocol is written once; only the source of message JSON differs.

use super::{AssembleInput, AssemblePlan, IndexedJson, Session};
use crate::error::{Error, Result};

/// Texts fetched before [`fetch`] first reserves heap for the rest (below it, growing as they
/// arrive costs little).
const FETCH_MARK: usize = 1 << 20;

/// What [`Session::drive`] plans: an assemble, or the host's `compact()` with a message list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drive {
    /// `assemble`.
    Assemble,
    /// `compact` (`force`: the host insists).
    Compact {
        /// The host insists on a fold.
        force: bool,
    },
}

/// A plan and how it was reached.
#[derive(Debug, Clone)]
pub struct Driven {
    /// The plan (never `needFull`).
    pub plan: AssemblePlan,
    /// The subset was not enough: every index was supplied on a second round.
    pub full: bool,
    /// The input of the last round (for callers that re-run it, e.g. an idempotence check).
    pub input: AssembleInput,
}

impl Session {
    /// Plan one call over a history of `head.count` messages whose JSON text `json_of(i)` gives
    /// (called only for the indices the engine asks for). `head` carries everything but the
    /// messages. A `needFull` answer with every index supplied is an internal error.
    pub fn drive(
        &mut self,
        head: AssembleInput,
        what: Drive,
        mut json_of: impl FnMut(u32) -> String,
    ) -> Result<Driven> {
        self.try_drive(head, what, |i| Ok(json_of(i)))
    }

    /// [`Session::drive`] with a source that can fail (the shim's callback). Each round's
    /// messages are all fetched before the engine sees them, and a `needFull` answer changes
    /// nothing, so a failing source leaves the session untouched.
    pub fn try_drive(
        &mut self,
        mut head: AssembleInput,
        what: Drive,
        mut json_of: impl FnMut(u32) -> Result<String>,
    ) -> Result<Driven> {
        let count = head.count;
        head.messages = fetch(self.need(count), &mut json_of)?;
        let plan = self.drive_once(&head, what)?;
        if !plan.need_full {
            return Ok(Driven {
                plan,
                full: false,
                input: head,
            });
        }
        head.messages = fetch((0..count).collect(), &mut json_of)?;
        let plan = self.drive_once(&head, what)?;
        if plan.need_full {
            return Err(Error::Internal("needFull with every index supplied".into()));
        }
        Ok(Driven {
            plan,
            full: true,
            input: head,
        })
    }

    fn drive_once(&mut self, input: &AssembleInput, what: Drive) -> Result<AssemblePlan> {
        match what {
            Drive::Assemble => self.assemble(input),
            Drive::Compact { force } => self.compact(input, force),
        }
    }
}

/// The messages `indices` from `json_of`, in order; the first failure ends the fetch.
///
/// A long fetch grows the heap in a few steps ([`super::reserve_room`]): each time the texts
/// fetched so far pass a mark, room for the remaining ones at the average size so far is
/// reserved (at most twice the texts so far: a few large first messages must not make a wasm
/// memory, which never shrinks, grow for texts that do not come), and the next mark is past
/// that room. Without it the allocator grows linear memory 64 KiB at a time as the texts
/// arrive: the first fetch of 100,000 messages (60 MB) took about a thousand `memory.grow`
/// calls.
fn fetch(
    indices: Vec<u32>,
    json_of: &mut dyn FnMut(u32) -> Result<String>,
) -> Result<Vec<IndexedJson>> {
    let n = indices.len();
    let mut out = Vec::with_capacity(n);
    let (mut bytes, mut mark) = (0usize, FETCH_MARK);
    for (k, index) in indices.into_iter().enumerate() {
        let json = json_of(index)?;
        bytes = bytes.saturating_add(json.len());
        if bytes >= mark {
            // Each text is its own allocation: its size plus the allocator's header and alignment.
            let average = bytes / (k + 1) + 16;
            let room = (n - k - 1)
                .saturating_mul(average)
                .min(bytes.saturating_mul(2));
            super::reserve_room(room);
            mark = bytes.saturating_add(room.max(FETCH_MARK));
        }
        out.push(IndexedJson { index, json });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The heap reservations of a long fetch change nothing it returns: every text, in order,
    /// under its index, whatever the sizes (past the first mark, a few large texts then many
    /// small ones, one text over the mark on its own).
    #[test]
    fn fetch_returns_every_text_in_order() {
        let big = "x".repeat(FETCH_MARK + 1);
        let cases: Vec<Vec<String>> = vec![
            (0..3_000)
                .map(|i| format!("{{\"i\":{i},\"t\":\"{}\"}}", "y".repeat(700)))
                .collect(),
            (0..2_000)
                .map(|i| if i < 3 { big.clone() } else { format!("{i}") })
                .collect(),
            vec![big.clone()],
            Vec::new(),
        ];
        for texts in cases {
            let indices: Vec<u32> = (0..texts.len() as u32).rev().step_by(2).collect();
            let got = fetch(indices.clone(), &mut |i| Ok(texts[i as usize].clone())).unwrap();
            assert_eq!(got.len(), indices.len());
            for (m, &i) in got.iter().zip(&indices) {
                assert_eq!(m.index, i);
                assert_eq!(m.json, texts[i as usize]);
            }
        }
    }

    /// A failing source ends the fetch with its error, past a reservation too.
    #[test]
    fn fetch_stops_at_the_first_failure() {
        let text = "z".repeat(4_096);
        let mut calls = 0;
        let err = fetch((0..1_000).collect(), &mut |i| {
            calls += 1;
            if i == 600 {
                Err(Error::Input("gone".into()))
            } else {
                Ok(text.clone())
            }
        })
        .unwrap_err();
        assert_eq!(err.code(), Error::Input(String::new()).code());
        assert_eq!(calls, 601);
    }
}
