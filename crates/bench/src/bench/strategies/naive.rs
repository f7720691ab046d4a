//! S0: naive full history.

use super::{Ctx, Strategy};
use crate::bench::store::M;

/// S0: naive full history.
pub struct Naive;

impl Strategy for Naive {
    fn id(&self) -> &'static str {
        "S0"
    }
    fn label(&self) -> &'static str {
        "naive full history"
    }
    fn assemble(&mut self, _ctx: &mut Ctx, hist: &[M]) -> Vec<M> {
        hist.to_vec()
    }
}
