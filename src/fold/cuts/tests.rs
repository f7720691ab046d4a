use super::*;
use proptest::prelude::*;

fn rec(shape: Shape) -> MsgRecord {
    MsgRecord {
        shape,
        ..MsgRecord::default()
    }
}

const IDS: &[&str] = &["a", "b", "c"];

fn shape() -> impl Strategy<Value = Shape> {
    crate::pairing::tests::shapes(IDS, 3, "x")
}

/// What can happen to a record list: appends, and the changes that must invalidate.
#[derive(Debug, Clone)]
enum Op {
    Push(Shape),
    /// Several appends between two queries.
    PushMany(Vec<Shape>),
    /// `Diverge Truncate`, notified.
    Truncate(usize),
    /// `repin`, notified.
    Clear,
    /// A record changed in place, notified.
    Replace(usize, Shape),
    /// Records dropped without notice, queried before anything is appended (the guard).
    TruncateUnnotified(usize),
    /// The state cloned (a fork): the clone goes on, the original is checked once more.
    Fork,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => shape().prop_map(Op::Push),
        3 => proptest::collection::vec(shape(), 0..12).prop_map(Op::PushMany),
        1 => (0usize..40).prop_map(Op::Truncate),
        1 => Just(Op::Clear),
        1 => ((0usize..40), shape()).prop_map(|(i, s)| Op::Replace(i, s)),
        1 => (0usize..40).prop_map(Op::TruncateUnnotified),
        1 => Just(Op::Fork),
    ]
}

/// Every answer of `c` against the full rescan, for every `live`/`count`/`p` near the records.
fn check(c: &CutCache, records: &[MsgRecord]) {
    let full = boundaries(records);
    let shapes: Vec<Shape> = records.iter().map(|r| r.shape.clone()).collect();
    let mut want = crate::pairing::cut_points_of(&shapes);
    shapes_end(&shapes, &mut want);
    let want: Vec<u32> = want.into_iter().map(|c| c as u32).collect();
    assert_eq!(full, want, "fold::boundaries vs pairing::cut_points_of");
    assert_eq!(c.boundaries(records), full);
    let n = records.len() as u32;
    for p in 0..=n + 2 {
        assert_eq!(
            c.first_at_least(records, p),
            full.iter().copied().find(|x| *x >= p),
            "first_at_least({p})"
        );
    }
    for count in 0..=n + 2 {
        let recs = records.get(..count as usize).unwrap_or(records);
        let prefix = boundaries(recs);
        for live in 0..=count {
            let mut want = prefix.clone();
            want.retain(|x| *x > live && *x < count);
            assert_eq!(
                c.between(records, live, count),
                want,
                "between({live}, {count})"
            );
        }
    }
}

/// `records.len()` is a boundary when a user message appended there would be a cut point.
fn shapes_end(shapes: &[Shape], cuts: &mut Vec<usize>) {
    let mut with_user = shapes.to_vec();
    with_user.push(Shape::user());
    if crate::pairing::cut_points_of(&with_user).last() == Some(&shapes.len()) {
        cuts.push(shapes.len());
    }
}

fn run(ops: Vec<Op>) {
    let mut records: Vec<MsgRecord> = Vec::new();
    let mut c = CutCache::default();
    check(&c, &records);
    for o in ops {
        match o {
            Op::Push(s) => records.push(rec(s)),
            Op::PushMany(v) => records.extend(v.into_iter().map(rec)),
            Op::Truncate(k) => {
                records.truncate(k);
                c.invalidate();
            }
            Op::Clear => {
                records.clear();
                c.invalidate();
            }
            Op::Replace(i, s) => {
                if let Some(r) = records.get_mut(i) {
                    r.shape = s;
                }
                c.invalidate();
            }
            Op::TruncateUnnotified(k) => records.truncate(k),
            Op::Fork => {
                let fork = c.clone();
                check(&c, &records);
                c = fork;
            }
        }
        check(&c, &records);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn cache_answers_as_a_full_rescan(ops in proptest::collection::vec(op(), 0..40)) {
        run(ops);
    }
}

/// A truncation followed by appends that end on an equal shape at the old last index is only
/// caught by the owner's `invalidate` (the guard alone cannot see it): the engine calls it on
/// every truncation and repin.
#[test]
fn truncate_then_regrow_is_rebuilt_after_invalidate() {
    let a = || rec(Shape::call(&["a"]));
    let r = || rec(Shape::result("a"));
    let u = || rec(Shape::user());
    let mut records = vec![u(), u(), u(), u()];
    let mut c = CutCache::default();
    assert_eq!(c.boundaries(&records), vec![0, 1, 2, 3, 4]);
    records.truncate(1);
    c.invalidate();
    records.extend([a(), u(), u()]);
    assert_eq!(c.boundaries(&records), vec![0, 1, 3, 4]);
    assert_eq!(c.between(&records, 0, 9), vec![1, 3, 4]);
    records.truncate(2);
    c.invalidate();
    records.extend([r(), u()]);
    assert_eq!(c.boundaries(&records), vec![0, 1, 3, 4]);
}

#[test]
fn empty_and_open_end() {
    let c = CutCache::default();
    assert_eq!(c.boundaries(&[]), vec![0]);
    assert_eq!(c.first_at_least(&[], 0), Some(0));
    assert_eq!(c.first_at_least(&[], 1), None);
    let open = vec![rec(Shape::user()), rec(Shape::call(&["a"]))];
    assert_eq!(c.boundaries(&open), vec![0, 1]);
    assert_eq!(c.between(&open, 0, 5), vec![1]);
    assert_eq!(c.first_at_least(&open, 2), None);
}
