//! Cost arithmetic of the bench (prices from `crate::cost`, docs/cache-model.md).

use cachefold_bench::bench::cache::Params;
use cachefold_bench::bench::run::{call_costs, price_known, Options};

fn opts(price: &str) -> Options {
    Options {
        window: 1_000_000,
        cache: Params::ds_strict(),
        price: price.into(),
        warm_static: true,
        price_row: None,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn one_million_each() {
    let c = call_costs(
        &opts("deepseek-flash-peak"),
        0.0,
        1_000_000,
        1_000_000,
        1_000_000,
    );
    assert!(close(c.headline, 0.006 + 0.30 + 1.20), "{}", c.headline);
    assert!(close(c.headline_input, 0.306));
    assert!(close(c.flash_peak, 1.506));
    assert!(close(c.flash_offpeak, 0.003 + 0.15 + 0.60));
    assert!(close(c.pro_peak, 0.044 + 1.32 + 3.96));
    assert!(close(c.pro_offpeak, 0.022 + 0.66 + 1.98));
}

#[test]
fn hit_is_one_fiftieth_of_miss_on_flash() {
    let o = opts("deepseek-flash-peak");
    let hit = call_costs(&o, 0.0, 50_000, 0, 0).headline;
    let miss = call_costs(&o, 0.0, 0, 1_000, 0).headline;
    assert!(close(hit, miss), "{hit} vs {miss}");
    // v4-pro: 1/30.
    let p = opts("deepseek-v4-pro-peak");
    assert!(close(
        call_costs(&p, 0.0, 30_000, 0, 0).headline,
        call_costs(&p, 0.0, 0, 1_000, 0).headline
    ));
}

#[test]
fn auto_band_follows_the_timestamp() {
    let o = opts("deepseek-flash-auto");
    // 2026-11-16 is a Monday. 07:00 UTC is peak, 12:00 UTC off-peak; Saturday 07:00 off-peak.
    let monday_7 = 1_794_812_400_000.0;
    let monday_12 = monday_7 + 5.0 * 3_600_000.0;
    let saturday_7 = monday_7 + 5.0 * 86_400_000.0;
    let peak = call_costs(&o, monday_7, 0, 1_000_000, 0).headline;
    let off = call_costs(&o, monday_12, 0, 1_000_000, 0).headline;
    let sat = call_costs(&o, saturday_7, 0, 1_000_000, 0).headline;
    assert!(
        close(peak, 0.30) && close(off, 0.15) && close(sat, 0.15),
        "{peak} {off} {sat}"
    );
    assert!(
        price_known("deepseek-flash-auto")
            && price_known("deepseek-v4-pro-auto")
            && price_known("kimi-like")
    );
    assert!(!price_known("deepseek-flash-noon") && !price_known("nope"));
}

#[test]
fn section_5_6_fold_example_is_consistent() {
    // L = 200K cached → L' = 30K, static 5K, S = 3K, flash peak: one-off ≈ $0.0123, saving ≈
    // $0.00102 per call, n* ≈ 12 (docs/cache-model.md), computed with the bench's prices.
    let o = opts("deepseek-flash-peak");
    let one_off = call_costs(&o, 0.0, 0, 25_000, 0).headline
        + call_costs(&o, 0.0, 200_000, 0, 3_000).headline;
    let saving = call_costs(&o, 0.0, 170_000, 0, 0).headline;
    assert!((one_off - 0.0123).abs() < 0.0003, "{one_off}");
    assert!((saving - 0.00102).abs() < 0.00001, "{saving}");
    let n = one_off / saving;
    assert!((11.0..13.0).contains(&n), "{n}");
}

/// `--loso --provider`: a profile's price row replaces the headline price key (the other
/// rows stay the DeepSeek ones).
#[test]
fn a_price_row_replaces_the_headline_key() {
    let o = Options {
        price_row: Some(cachefold::cost::Price {
            key: "anthropic-sonnet".into(),
            hit: 0.3,
            miss: 3.0 * 1.25,
            output: 15.0,
        }),
        ..opts("deepseek-flash-peak")
    };
    let c = call_costs(&o, 0.0, 1_000_000, 1_000_000, 1_000_000);
    assert!(close(c.headline_input, 0.3 + 3.75), "{}", c.headline_input);
    assert!(close(c.headline, 0.3 + 3.75 + 15.0), "{}", c.headline);
    assert!(close(c.flash_peak, 1.506), "{}", c.flash_peak);
}
