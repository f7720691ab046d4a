//! The one plan driver: `need(count)` → assemble with those indices → on `needFull`, again with
//! every index. The shim, the replay, the bench and the tests all plan through [`Session::drive`],
//! so the protocol is written once; only the source of message JSON differs.

use super::{AssembleInput, AssemblePlan, IndexedJson, Session};
use crate::error::{Error, Result};

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
        head.messages = fetch(super::indices(0, count), &mut json_of)?;
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
fn fetch(
    indices: Vec<u32>,
    json_of: &mut dyn FnMut(u32) -> Result<String>,
) -> Result<Vec<IndexedJson>> {
    let mut out = Vec::with_capacity(indices.len());
    for index in indices {
        out.push(IndexedJson {
            index,
            json: json_of(index)?,
        });
    }
    Ok(out)
}
