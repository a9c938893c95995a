//! Numbers written the way JavaScript's `String(x)` does (ECMA-262 `Number::toString`), through
//! the `ryu-js` crate: the strategy names of influence.md §5 (`margin>=0.05`, `margin>=1e-7`,
//! `margin>=Infinity`), the canonical JSON of the ledger's digests, and the effects printed by
//! the command line and the screen all share this one formatter, so a number reads and hashes
//! the same everywhere.

/// `x` as JavaScript writes it: the shortest digits that round-trip; plain decimal for
/// 1e-6 ≤ |x| < 1e21, otherwise exponent form (`1e-7`, `1.5e+21`); `NaN`, `Infinity`,
/// `-Infinity`; `-0` as `0`; `1` not `1.0`.
pub fn js_number(x: f64) -> String {
    ryu_js::Buffer::new().format(x).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_like_javascript_at_the_edges() {
        assert_eq!(js_number(-1e-7), "-1e-7");
        assert_eq!(js_number(0.000001), "0.000001");
        assert_eq!(js_number(123456789012345680000.0), "123456789012345680000");
        assert_eq!(js_number(1e21), "1e+21");
        assert_eq!(js_number(1.5e300), "1.5e+300");
        assert_eq!(js_number(5e-324), "5e-324");
        assert_eq!(js_number(-0.0), "0");
        assert_eq!(js_number(1.0), "1");
        assert_eq!(js_number(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(js_number(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(js_number(f64::INFINITY), "Infinity");
        assert_eq!(js_number(f64::NAN), "NaN");
        assert_eq!(js_number(-2.5), "-2.5");
    }
}
