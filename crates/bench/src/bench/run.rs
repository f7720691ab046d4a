//! Replay loop and per-(session, strategy) metrics (docs/cache-model.md).
//!
//! For each recorded call k (in order): the messages before it are ingested (through the
//! strategy's ingest hook), the strategy assembles the request, any summariser calls it made
//! are simulated on the strategy's separate summariser cache, the request `X_k` is rendered
//! (static prefix + assembled messages) and simulated with output `Y_k` = the recorded
//! assistant message, replayed verbatim.

use super::anchors::{AnchorId, Holders, Interner};
use super::cache::{Seq, Sim};
use super::pack::Dict;
use super::render::{self, Slot};
use super::store::{output_text, Store, M};
use super::strategies::{Ctx, ExtraCall, Strategy};
use super::tokenizer::{hash128, BaseTokens, PackedTokens, Stored, TokenCache, Tokenizer, Tokens};
use crate::replay::transcript::Transcript;
use ::cachefold::message::{Message, Role};
use ::cachefold::pairing::{self, Shape};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

pub use super::metrics::{
    call_costs, price_known, ratio, Costs, JobResult, Metrics, Options, Point,
};

/// The fixed prefix every main request starts with.
pub struct StaticPrefix {
    /// Rendered text (BOS + system + tools).
    pub text: String,
    /// Its tokens.
    pub tokens: Tokens,
    /// Chars (for chars/4 estimators).
    pub chars: u64,
    /// Profile name.
    pub profile: String,
}

/// Template glue pieces, tokenized once.
pub struct Glue {
    user: Tokens,
    sep: Tokens,
    trans: Tokens,
    summarizer_static: Tokens,
}

impl Glue {
    /// Tokenize the glue and the summariser's static prefix.
    pub fn new(tok: &Tokenizer) -> Glue {
        Glue {
            user: tok.encode(render::USER).into(),
            sep: tok.encode(render::SEP).into(),
            trans: tok.encode(render::TRANSITION).into(),
            summarizer_static: tok
                .encode(&render::render_static(
                    super::summarize::SUMMARIZER_SYSTEM,
                    &[],
                ))
                .into(),
        }
    }
}

/// One session prepared for replay (shared, read-only, by all strategy jobs).
pub struct Prepared {
    /// Display name.
    pub name: String,
    /// Reader format.
    pub format: String,
    /// Replayed calls: (assistant index in `messages`, timestamp ms).
    pub calls: Vec<(usize, f64)>,
    /// Bench messages of the originals (keys, anchors); each job's store extends it.
    pub store: Arc<Store>,
    /// Original bench messages by index.
    pub orig: Vec<M>,
    /// Pre-tokenized bodies of the originals (key = hash of body text); packed in a long
    /// session.
    pub base_tokens: Arc<BaseTokens>,
    /// Needed anchors per call: (anchor, first seen ≥ 50 calls earlier).
    pub needed: Vec<Vec<(AnchorId, bool)>>,
    /// Anchor → original indices whose text contains it (for recovery credit).
    pub orig_holders: Holders,
    /// Recorded compactions (for the report).
    pub recorded_compactions: usize,
    /// Lines the reader skipped.
    pub skipped_lines: u64,
    /// Recorded provider usage summed over replayed calls (prompt, cached, output).
    pub recorded: (u64, u64, u64),
}

impl Prepared {
    /// Messages replayed (assistant messages without content are dropped: pi-ai drops
    /// aborted/errored empty turns from the context).
    pub fn message_count(&self) -> usize {
        self.orig.len()
    }

    /// Replayed message `i` (each message is held once, as JSON in its bench wrapper).
    pub fn message(&self, i: usize) -> Option<Message> {
        self.orig.get(i).map(|m| m.msg().into_owned())
    }
}

/// Rendered text tokenized per batch while preparing a session.
const PREPARE_BATCH_BYTES: usize = 4 << 20;

/// Prepare a parsed transcript: filter, wrap, tokenize originals (in parallel), find anchors.
/// Copies the messages; [`prepare_owned`] moves them.
pub fn prepare(tok: &Tokenizer, name: &str, t: &Transcript) -> Prepared {
    prepare_owned(tok, name, t.clone())
}

/// [`prepare`] taking the transcript: its messages move into the prepared session, so the
/// session is held once, not twice (the parsed transcript is gone when this returns).
pub fn prepare_owned(tok: &Tokenizer, name: &str, t: Transcript) -> Prepared {
    prepare_inner(tok, name, t, None)
}

/// [`prepare_owned`] keeping the session's messages and tokens packed (`pack`) or not, whatever
/// its length (a long session's are: more than [`super::driver::SERIAL_CALLS`] calls). A replay
/// gives the same results either way.
pub fn prepare_packing(tok: &Tokenizer, name: &str, t: Transcript, pack: bool) -> Prepared {
    prepare_inner(tok, name, t, Some(pack))
}

fn prepare_inner(tok: &Tokenizer, name: &str, t: Transcript, pack: Option<bool>) -> Prepared {
    let Transcript {
        format,
        messages: parsed,
        calls: recorded_calls,
        compactions,
        skipped_lines,
    } = t;
    // Drop assistant messages with no content at all (aborted before any output).
    let mut keep_idx: Vec<Option<usize>> = Vec::with_capacity(parsed.len());
    let mut messages = Vec::with_capacity(parsed.len());
    for m in parsed {
        if m.role() == Role::Assistant && m.parts().is_empty() {
            keep_idx.push(None);
        } else {
            keep_idx.push(Some(messages.len()));
            messages.push(m);
        }
    }
    let mut calls = Vec::new();
    let mut recorded = (0u64, 0u64, 0u64);
    for c in &recorded_calls {
        if let Some(Some(i)) = keep_idx.get(c.assistant_index) {
            calls.push((*i, c.timestamp_ms));
            if let Some(u) = c.usage {
                recorded.0 += u.prompt();
                recorded.1 += u.cache_read;
                recorded.2 += u.output;
            }
        }
    }
    drop(recorded_calls);
    // A long session's messages and tokens are kept compressed (see `BMsg`, `BaseTokens`); its
    // strategies also run one after the other (`driver::SERIAL_CALLS`).
    let pack = pack.unwrap_or(calls.len() > super::driver::SERIAL_CALLS);
    // Their dictionary: messages taken across the session (see `pack::Dict`).
    let dict = if pack {
        let step = (messages.len() / 512).max(1);
        let sample: Vec<String> = messages
            .iter()
            .step_by(step)
            .map(Message::to_json)
            .collect();
        let refs: Vec<&[u8]> = sample.iter().map(|j| j.as_bytes()).collect();
        Dict::sample(&refs)
    } else {
        None
    };
    let mut store = Store::with_interner(Interner::default())
        .packing(pack)
        .dictionary(dict);
    let n_messages = messages.len();
    let mut orig: Vec<M> = messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| store.make(m, Some(i), Vec::new()))
        .collect();
    // Collected in place: without this the list keeps the parsed messages' allocation (a
    // `Message` is 9 times a handle's size).
    orig.shrink_to_fit();

    // Tokenize every original body once, in parallel, a few MB of rendered text at a time (the
    // texts are dropped once tokenized: never the whole session's text at once). Blocks followed
    // by another block of the same user turn are tokenized with the separator too.
    let mut cache = TokenCache::default();
    let mut base = BaseTokens::packing(pack);
    let mut bodies: Vec<String> = Vec::new();
    let mut bytes = 0usize;
    for (i, m) in orig.iter().enumerate() {
        let b = render::body(&m.msg());
        if m.slot == Slot::UserBlock && orig.get(i + 1).is_some_and(|n| n.slot == Slot::UserBlock) {
            let with_sep = format!("{b}{}", render::SEP);
            bytes += with_sep.len();
            bodies.push(with_sep);
        }
        bytes += b.len();
        bodies.push(b);
        if bytes >= PREPARE_BATCH_BYTES || i + 1 == orig.len() {
            let refs: Vec<&str> = bodies.iter().map(String::as_str).collect();
            cache.prefill(tok, &refs);
            if pack && base.is_empty() {
                // The tokens' dictionary: pieces of the first batch (the session's first
                // PREPARE_BATCH_BYTES of text).
                let sample: Vec<Vec<u8>> = bodies
                    .iter()
                    .map(|b| PackedTokens::bytes(&cache.get(tok, b)))
                    .collect();
                let refs: Vec<&[u8]> = sample.iter().map(Vec::as_slice).collect();
                base.dictionary(Dict::sample(&refs));
            }
            for b in bodies.drain(..) {
                base.insert(hash128(b.as_bytes()), cache.get(tok, &b));
            }
            if pack {
                // Packed: the batch's unpacked tokens go now (a body seen again later is
                // tokenized again, to the same tokens).
                cache.clear();
            }
            bytes = 0;
        }
    }

    // Anchors: first sighting in a user message or tool result; needed when a later output uses it.
    let mut first_seen: HashMap<AnchorId, usize> = HashMap::new();
    let orig_holders = Holders::new(store.interner.len(), orig.iter().map(|m| &m.anchors[..]));
    for (i, m) in orig.iter().enumerate() {
        if matches!(m.role(), Role::User | Role::ToolResult) {
            for a in &m.anchors {
                first_seen.entry(*a).or_insert(i);
            }
        }
    }
    // calls_before[i] = number of replayed calls whose assistant index < i.
    let mut calls_before = vec![0usize; n_messages + 1];
    {
        let mut ci = 0usize;
        for (i, slot) in calls_before.iter_mut().enumerate() {
            while calls.get(ci).is_some_and(|(ai, _)| *ai < i) {
                ci += 1;
            }
            *slot = ci;
        }
    }
    let mut needed = Vec::with_capacity(calls.len());
    for (k, (ai, _)) in calls.iter().enumerate() {
        let mut v = Vec::new();
        if let Some(m) = orig.get(*ai) {
            let text = output_text(&m.msg());
            let mut seen = HashSet::new();
            for a in super::anchors::extract(&text) {
                let Some(id) = store.interner.get(&a) else {
                    continue;
                };
                if let Some(&fs) = first_seen.get(&id) {
                    if fs < *ai && seen.insert(id) {
                        let old = calls_before.get(fs).copied().unwrap_or(0) + 50 <= k;
                        v.push((id, old));
                    }
                }
            }
        }
        needed.push(v);
    }
    Prepared {
        name: name.to_string(),
        format,
        calls,
        store: Arc::new(store),
        orig,
        base_tokens: Arc::new(base),
        needed,
        orig_holders,
        recorded_compactions: compactions.len(),
        skipped_lines,
        recorded,
    }
}

/// Renders requests from bench messages, memoising body tokens (not those of packed bodies,
/// which are read back when rendered: a long session's tokens are not all held unpacked).
pub struct Renderer<'a> {
    tok: &'a Tokenizer,
    base: Arc<BaseTokens>,
    local: TokenCache,
    memo: HashMap<u128, Tokens>,
    glue: &'a Glue,
    /// The last [`Renderer::main_request`]: its messages, its pieces without the closing
    /// transition, and per message the number of pieces before it.
    last: Option<LastRequest>,
    /// Messages rendered by [`Renderer::main_request`] (tests: work per call).
    rendered: u64,
}

struct LastRequest {
    static_tokens: Tokens,
    msgs: Vec<M>,
    seq: Seq,
    marks: Vec<usize>,
}

impl<'a> Renderer<'a> {
    /// New renderer over a session's pre-tokenized originals.
    pub fn new(tok: &'a Tokenizer, base: Arc<BaseTokens>, glue: &'a Glue) -> Renderer<'a> {
        Renderer {
            tok,
            base,
            local: TokenCache::default(),
            memo: HashMap::new(),
            glue,
            last: None,
            rendered: 0,
        }
    }

    /// Messages [`Renderer::main_request`] rendered so far (the rest it reused).
    pub fn rendered_messages(&self) -> u64 {
        self.rendered
    }

    /// [`Renderer::request`] for a stream of requests that mostly extend each other: the pieces
    /// of the messages this request shares with the previous one (same keys, in order) are
    /// reused, and only the messages after them are rendered (plus the last shared one, whose
    /// pieces depend on the next message's slot). The same tokens and pieces as `request`.
    pub fn main_request(&mut self, static_tokens: &Tokens, msgs: &[M]) -> Seq {
        let mut last = match self.last.take() {
            Some(l) if Arc::ptr_eq(&l.static_tokens, static_tokens) => l,
            _ => {
                let mut seq = Seq::new();
                seq.push(static_tokens.clone());
                LastRequest {
                    static_tokens: static_tokens.clone(),
                    msgs: Vec::new(),
                    seq,
                    marks: Vec::new(),
                }
            }
        };
        let same = last
            .msgs
            .iter()
            .zip(msgs)
            .take_while(|(a, b)| Arc::ptr_eq(a, b) || a.key == b.key)
            .count();
        // Message `same - 1` is rendered again: a user block's piece includes the separator
        // when the next message is a user block too.
        let from = same.saturating_sub(1);
        if let Some(&mark) = last.marks.get(from) {
            last.seq.truncate_pieces(mark);
            last.marks.truncate(from);
        }
        last.msgs.truncate(from);
        let mut in_user = from > 0
            && msgs
                .get(from - 1)
                .is_some_and(|m| m.slot == Slot::UserBlock);
        for (i, m) in msgs.iter().enumerate().skip(from) {
            last.marks.push(last.seq.piece_count());
            match m.slot {
                Slot::UserBlock => {
                    if !in_user {
                        last.seq.push(self.glue.user.clone());
                    }
                    // A block followed by another block of the same user turn: the `\n\n`
                    // merges with the block's last punctuation, so they are one piece.
                    if msgs.get(i + 1).is_some_and(|n| n.slot == Slot::UserBlock) {
                        let (t, z) = self.body_sep_piece(m);
                        last.seq.push_packed(t, z);
                    } else {
                        let (t, z) = self.body_piece(m);
                        last.seq.push_packed(t, z);
                    }
                    in_user = true;
                }
                Slot::Assistant => {
                    if in_user {
                        last.seq.push(self.glue.trans.clone());
                    }
                    let (t, z) = self.body_piece(m);
                    last.seq.push_packed(t, z);
                    in_user = false;
                }
            }
            last.msgs.push(m.clone());
            self.rendered += 1;
        }
        let mut out = last.seq.clone();
        if in_user {
            out.push(self.glue.trans.clone());
        }
        self.last = Some(last);
        out
    }

    /// Tokens of a message body.
    pub fn body(&mut self, m: &M) -> Tokens {
        self.body_piece(m).0
    }

    /// Token count of a message body (a packed one is not read back).
    pub fn body_len(&mut self, m: &M) -> usize {
        if !self.memo.contains_key(&m.key) {
            if let Some(Stored::Packed(z)) = self.base.get(&m.body_key) {
                return z.len();
            }
        }
        self.body(m).len()
    }

    /// Tokens of a message body, and the packed form they were read from, if any.
    pub fn body_piece(&mut self, m: &M) -> (Tokens, Option<Arc<PackedTokens>>) {
        if let Some(t) = self.memo.get(&m.key) {
            return (t.clone(), None);
        }
        // A session's original: its tokens were made while preparing it (no render).
        let t = match self.base.get(&m.body_key) {
            Some(Stored::Plain(t)) => t.clone(),
            Some(Stored::Packed(z)) => return (z.unpack(), Some(z.clone())),
            None => self.local.get(self.tok, &render::body(&m.msg())),
        };
        self.memo.insert(m.key, t.clone());
        (t, None)
    }

    /// Request tokens: static prefix, then the messages in template order, then the transition.
    pub fn request(&mut self, static_tokens: &Tokens, msgs: &[M]) -> Seq {
        self.request_kept(static_tokens, msgs, true)
    }

    /// [`Renderer::request`]; `keep: false` tokenizes the messages' bodies without keeping
    /// them, and packs them for the simulator that remembers them (one-shot messages).
    fn request_kept(&mut self, static_tokens: &Tokens, msgs: &[M], keep: bool) -> Seq {
        let mut s = Seq::new();
        s.push(static_tokens.clone());
        let slots: Vec<Slot> = msgs.iter().map(|m| m.slot).collect();
        let pieces = render::layout(&slots);
        let mut k = 0;
        while let Some(p) = pieces.get(k) {
            match p {
                render::Piece::User => s.push(self.glue.user.clone()),
                render::Piece::Sep => s.push(self.glue.sep.clone()),
                render::Piece::Transition => s.push(self.glue.trans.clone()),
                render::Piece::Body(i) => {
                    if let Some(m) = msgs.get(*i) {
                        // A block followed by another block of the same user turn: the `\n\n`
                        // merges with the block's last punctuation (`>\n\n` is one token),
                        // so tokenize them together.
                        let sep = pieces.get(k + 1) == Some(&render::Piece::Sep);
                        k += usize::from(sep);
                        let (t, z) = match (keep, sep) {
                            (true, true) => self.body_sep_piece(m),
                            (true, false) => self.body_piece(m),
                            (false, _) => {
                                let mut text = render::body(&m.msg());
                                if sep {
                                    text.push_str(render::SEP);
                                }
                                self.unkept(&text)
                            }
                        };
                        s.push_packed(t, z);
                    }
                }
            }
            k += 1;
        }
        s
    }

    /// Tokens of a message body followed by the block separator, and the packed form they
    /// were read from, if any.
    fn body_sep_piece(&mut self, m: &M) -> (Tokens, Option<Arc<PackedTokens>>) {
        let key = m.key ^ 0x5e9a_7a70_0000_0000_0000_0000_0000_0001;
        if let Some(t) = self.memo.get(&key) {
            return (t.clone(), None);
        }
        let mut text = render::body(&m.msg());
        text.push_str(render::SEP);
        let t = match self.base.get(&hash128(text.as_bytes())) {
            Some(Stored::Plain(t)) => t.clone(),
            Some(Stored::Packed(z)) => return (z.unpack(), Some(z.clone())),
            None => self.local.get(self.tok, &text),
        };
        self.memo.insert(key, t.clone());
        (t, None)
    }

    /// Tokens of a one-shot text, not kept by this renderer, and their packed form.
    fn unkept(&self, text: &str) -> (Tokens, Option<Arc<PackedTokens>>) {
        let t: Tokens = self.tok.encode(text).into();
        let z = PackedTokens::pack(&t).map(Arc::new);
        (t, z)
    }

    /// A summariser request. In a long session (packed tokens) its prompt and answer, each
    /// made for this one call, are not kept by the renderer and the summariser's simulator
    /// keeps them packed: a session's summariser prompts add up to its history many times.
    pub fn summarizer_request(&mut self, call: &ExtraCall) -> (Seq, Seq) {
        let st = match &call.system {
            Some(sys) => self.local.get(self.tok, &render::render_static(sys, &[])),
            None => self.glue.summarizer_static.clone(),
        };
        let keep = !self.base.packs();
        let x = self.request_kept(&st, &call.prompt, keep);
        let mut y = Seq::new();
        let (t, z) = if keep {
            self.body_piece(&call.output)
        } else {
            self.unkept(&render::body(&call.output.msg()))
        };
        y.push_packed(t, z);
        (x, y)
    }
}

/// Replay one session with one strategy.
pub fn run_job(
    tok: &Tokenizer,
    glue: &Glue,
    prefix: &StaticPrefix,
    prep: &Prepared,
    strategy: &mut dyn Strategy,
    opts: &Options,
    progress: &mut dyn FnMut(usize),
) -> JobResult {
    let mut store = Store::over(prep.store.clone());
    let mut renderer = Renderer::new(tok, prep.base_tokens.clone(), glue);
    let mut sim = Sim::new(opts.cache);
    let mut sum_sim = Sim::new(opts.cache);
    if opts.warm_static {
        // An earlier session's request that shared only the static prefix.
        let t0 = prep.calls.first().map_or(0.0, |c| c.1);
        let mut st = Seq::new();
        st.push(prefix.tokens.clone());
        let _ = sim.request(&st, &Seq::new(), t0);
        let mut sst = Seq::new();
        sst.push(glue.summarizer_static.clone());
        let _ = sum_sim.request(&sst, &Seq::new(), t0);
    }
    let mut hist: Vec<M> = Vec::with_capacity(prep.orig.len());
    let mut next = 0usize;
    let mut m = Metrics::default();
    let mut series = Vec::with_capacity(prep.calls.len());
    let mut rates: Vec<f64> = Vec::with_capacity(prep.calls.len());
    let mut sizes: Vec<u64> = Vec::with_capacity(prep.calls.len());
    let mut tw_num = 0f64;
    let mut tw_den = 0f64;
    let mut floor_from = 0usize;
    // Originals already recovered once (their text stays in the conversation).
    let mut recovered: HashSet<usize> = HashSet::new();
    let mut view = RequestView::default();
    for (k, &(ai, ts)) in prep.calls.iter().enumerate() {
        let mut ctx = Ctx {
            store: &mut store,
            window: opts.window,
            static_chars: prefix.chars,
            extra: Vec::new(),
            fold_failures: 0,
            folds: 0,
            now_ms: ts,
        };
        while next < ai {
            if let Some(o) = prep.orig.get(next) {
                let im = strategy.ingest(&mut ctx, o.clone(), next);
                hist.push(im);
            }
            next += 1;
        }
        let msgs = strategy.assemble(&mut ctx, &hist);
        let extra = std::mem::take(&mut ctx.extra);
        m.folds += ctx.folds;
        m.fold_failures += ctx.fold_failures;
        let mut call_cost = 0f64;
        for e in &extra {
            let (x, y) = renderer.summarizer_request(e);
            let o = sum_sim.request(&x, &y, ts);
            m.extra_calls += 1;
            m.extra_prompt_tokens += o.prompt;
            m.extra_hit_tokens += o.hit;
            m.extra_ceiling_tokens += o.ceiling;
            m.extra_novel_tokens += o.novel;
            m.extra_output_tokens += y.len() as u64;
            let c = call_costs(opts, ts, o.hit, o.miss, y.len() as u64);
            call_cost += c.headline;
            m.cost.add(&c);
        }
        let x = renderer.main_request(&prefix.tokens, &msgs);
        let mut y = Seq::new();
        if let Some(a) = prep.orig.get(ai) {
            let (t, z) = renderer.body_piece(a);
            y.push_packed(t, z);
        }
        let o = sim.request(&x, &y, ts);
        strategy.observe(ai, o.hit, o.miss, y.len() as u64);
        {
            let novel: u64 = prep
                .orig
                .get(floor_from..ai)
                .unwrap_or(&[])
                .iter()
                .filter(|mm| mm.role() != Role::Assistant)
                .map(|mm| renderer.body_len(mm) as u64)
                .sum();
            floor_from = ai + 1;
            let st = prefix.tokens.len() as u64;
            let (hit, miss) = if k == 0 && !opts.warm_static {
                (0, st + novel)
            } else {
                (st, novel)
            };
            m.floor
                .add(&call_costs(opts, ts, hit, miss, y.len() as u64));
        }
        m.calls += 1;
        m.prompt_tokens += o.prompt;
        m.hit_tokens += o.hit;
        m.miss_tokens += o.miss;
        m.ceiling_tokens += o.ceiling;
        m.novel_tokens += o.novel;
        m.remainder_tokens += o.remainder;
        m.output_tokens += y.len() as u64;
        if k == 0 {
            m.first_hit = o.hit;
            m.first_prompt = o.prompt;
        }
        let c = call_costs(opts, ts, o.hit, o.miss, y.len() as u64);
        call_cost += c.headline;
        m.cost.add(&c);
        m.peak_context = m.peak_context.max(o.prompt);
        if o.prompt > opts.window {
            m.overflow_calls += 1;
        }
        rates.push(ratio(o.hit, o.prompt));
        sizes.push(o.prompt);
        let gap = prep
            .calls
            .get(k + 1)
            .map_or(0.0, |(_, t2)| (t2 - ts).clamp(0.0, 300_000.0));
        tw_num += o.prompt as f64 * gap;
        tw_den += gap;

        // Pairing (DeepSeek rule) on the assembled request.
        view.update(&msgs);
        let v = pairing::violations(&view.shapes);
        if !v.is_empty() {
            m.pairing_violation_calls += 1;
            m.pairing_violations += v.len() as u64;
            if m.pairing_examples.len() < 3 {
                if let Some(f) = v.first() {
                    m.pairing_examples.push(format!(
                        "{} call {k}: {} {} at {} of {}",
                        prep.name,
                        f.kind,
                        f.call_id,
                        f.position,
                        msgs.len()
                    ));
                }
            }
        }

        // Anchor recall.
        if let Some(needed) = prep.needed.get(k) {
            if !needed.is_empty() {
                // Recoveries this call's credit assumes: one per original message whose
                // anchor is only reachable through recovery (first holder in credit order).
                let mut to_recover: Vec<usize> = Vec::new();
                for &(a, old) in needed {
                    // Some message of the request holds the anchor (every message of a request
                    // is a store's, whose anchors are those of its content).
                    let present = view.anchor_count.contains_key(&a);
                    let via = if present {
                        None
                    } else {
                        prep.orig_holders
                            .get(a)
                            .iter()
                            .map(|&i| i as usize)
                            .find(|&i| view.credited(i))
                    };
                    let credit = present || via.is_some();
                    if let Some(i) = via {
                        if !to_recover.contains(&i) {
                            to_recover.push(i);
                        }
                    }
                    m.anchors_needed += 1;
                    m.anchors_retained += u64::from(present);
                    m.anchors_retained_credit += u64::from(credit);
                    if old {
                        m.anchors_needed_old += 1;
                        m.anchors_retained_old += u64::from(present);
                    }
                }
                let remaining = prep.calls.len().saturating_sub(k + 1) as u64;
                let mut extra_context = 0u64;
                for i in to_recover {
                    if !recovered.insert(i) {
                        continue; // recovered earlier: its text is in the conversation since
                    }
                    let Some(orig) = prep.orig.get(i) else {
                        continue;
                    };
                    let page = recovered_tokens(renderer.body_len(orig) as u64, orig);
                    // The model's recovery request: the context at this point, hit and miss
                    // as simulated for it (later recoveries of the same call re-read it whole
                    // from the cache), plus the recover call it writes.
                    let (hit, miss) = if extra_context == 0 {
                        (o.hit, o.miss)
                    } else {
                        (o.prompt + extra_context, 0)
                    };
                    let mut c = call_costs(opts, ts, hit, miss, RECOVER_CALL_TOKENS);
                    // The recovered text, once at miss price. Later calls re-read it at hit
                    // price until a fold drops it; that is not charged (at most
                    // `page × remaining calls` hit tokens, `recovery_reread_tokens`).
                    c.add(&call_costs(opts, ts, 0, page, 0));
                    m.recovery_reread_tokens += page * remaining;
                    extra_context += page + RECOVER_CALL_TOKENS;
                    m.recoveries += 1;
                    m.recovered_tokens += page;
                    m.recovery_cost.add(&c);
                }
            }
        }
        series.push(Point {
            context: o.prompt,
            hit: o.hit,
            cost: call_cost,
        });
        progress(k + 1);
    }
    rates.sort_by(|a, b| a.total_cmp(b));
    m.median_hit_rate = rates.get(rates.len() / 2).copied().unwrap_or(0.0);
    sizes.sort_unstable();
    m.p95_context = sizes
        .get((sizes.len() * 95 / 100).min(sizes.len().saturating_sub(1)))
        .copied()
        .unwrap_or(0);
    m.time_weighted_context = if tw_den > 0.0 {
        tw_num / tw_den
    } else {
        m.mean_context()
    };
    m.counters = strategy.counters();
    JobResult {
        session: prep.name.clone(),
        strategy: strategy.id().to_string(),
        label: strategy.label().to_string(),
        metrics: m,
        series,
    }
}

/// What the per-call checks need about the assembled request (pairing shapes, message keys,
/// recovery credit), kept from one call to the next: a request that repeats the previous one's
/// messages and appends some costs only the appended ones.
#[derive(Default)]
struct RequestView {
    msgs: Vec<M>,
    shapes: Vec<Shape>,
    /// Anchor → how many messages of the request hold it.
    anchor_count: HashMap<AnchorId, u32>,
    /// Credited range → how many messages of the request credit it: single indices (a shrunk
    /// tool result's original) and longer ranges (a fold record's stored messages) apart, so
    /// that [`RequestView::credited`] looks one up and scans the few others.
    credit_one: HashMap<u32, u32>,
    credit_spans: HashMap<(u32, u32), u32>,
}

impl RequestView {
    fn update(&mut self, msgs: &[M]) {
        let same = self
            .msgs
            .iter()
            .zip(msgs)
            .take_while(|(a, b)| same_message(a, b))
            .count();
        // The shapes of the messages that leave the request, by key: a request that changes
        // (a fold, a compaction) sends most of them again after its new part. Only these are
        // kept: a shape per message of the session would grow with the session.
        let mut left: HashMap<u128, Shape> = HashMap::new();
        while self.msgs.len() > same {
            let (Some(m), Some(shape)) = (self.msgs.pop(), self.shapes.pop()) else {
                break;
            };
            for &a in m.anchors.iter() {
                dec(&mut self.anchor_count, a);
            }
            for &(a, b) in m.credit.ranges() {
                if b - a == 1 {
                    dec(&mut self.credit_one, a);
                } else {
                    dec(&mut self.credit_spans, (a, b));
                }
            }
            left.insert(m.key, shape);
        }
        for m in msgs.get(same..).unwrap_or(&[]) {
            for &a in m.anchors.iter() {
                *self.anchor_count.entry(a).or_insert(0) += 1;
            }
            for &(a, b) in m.credit.ranges() {
                if b - a == 1 {
                    *self.credit_one.entry(a).or_insert(0) += 1;
                } else {
                    *self.credit_spans.entry((a, b)).or_insert(0) += 1;
                }
            }
            let shape = match left.get(&m.key) {
                Some(s) => s.clone(),
                None => Shape::of(&m.msg()),
            };
            self.shapes.push(shape);
            self.msgs.push(m.clone());
        }
    }
}

impl RequestView {
    /// Whether some message of the request credits original index `i`.
    fn credited(&self, i: usize) -> bool {
        let Ok(i) = u32::try_from(i) else {
            return false;
        };
        self.credit_one.contains_key(&i) || self.credit_spans.keys().any(|&(a, b)| a <= i && i < b)
    }
}

/// The same bench message for the per-call checks: the same handle (what an unchanged request
/// repeats; no read of either message), else the same key and recovery credit.
fn same_message(a: &M, b: &M) -> bool {
    Arc::ptr_eq(a, b) || (a.key == b.key && a.credit == b.credit)
}

fn dec<K: std::hash::Hash + Eq>(map: &mut HashMap<K, u32>, k: K) {
    if let Some(n) = map.get_mut(&k) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            map.remove(&k);
        }
    }
}

/// Tokens of the `cachefold_recover` call a recovery writes (tool name, artifact id, range).
pub const RECOVER_CALL_TOKENS: u64 = 40;

/// Tokens one recovery brings back from an original of `tokens` tokens: one recover page
/// (`cachefold_recover`'s default cap, [`::cachefold::tools::recover::DEFAULT_MAX_CHARS`]
/// chars) in the original's own tokens-per-char, or the whole original when it is shorter.
fn recovered_tokens(tokens: u64, orig: &M) -> u64 {
    let chars = render::body(&orig.msg()).chars().count() as u64;
    let cap = ::cachefold::tools::recover::DEFAULT_MAX_CHARS;
    if chars <= cap || chars == 0 {
        tokens
    } else {
        (tokens * cap).div_ceil(chars)
    }
}

/// A static prefix of `n` opaque tokens (ids no tokenizer produces for ordinary text, so they
/// never match a message's tokens), standing for a host prefix known only by its size.
pub fn sized_prefix(n: u64, profile: super::prefix::Profile) -> StaticPrefix {
    let tokens: Tokens = (0..n).map(|i| u32::MAX - (i as u32 % (1 << 20))).collect();
    StaticPrefix {
        chars: n.saturating_mul(4),
        tokens,
        text: String::new(),
        profile: format!("{}-sized-{n}", profile.name()),
    }
}

/// Tokens of the static prefix for a profile.
pub fn static_prefix(tok: &Tokenizer, profile: super::prefix::Profile) -> StaticPrefix {
    let system = super::prefix::system_prompt(profile);
    let tools = super::prefix::tools(profile);
    let text = render::render_static(&system, &tools);
    let tokens: Tokens = tok.encode(&text).into();
    StaticPrefix {
        chars: text.chars().count() as u64,
        tokens,
        text,
        profile: profile.name().to_string(),
    }
}
