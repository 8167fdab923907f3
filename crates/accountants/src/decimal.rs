//! Printing a budget for people without ever printing less than it: [`RoundedUp`] shows a
//! value with 6 decimals (or 7 significant digits in scientific notation, or 6 significant
//! digits in the shortest form), rounded **up**,
//! so a user who copies a printed ε, δ or σ never claims less privacy loss (or more noise)
//! than was computed. `no_std`, no allocation.
//!
//! "Up" is meant for the number as a program reads it back: the printed decimal parses
//! (round to nearest, as every `f64` parser does) to an `f64` **≥** the value, and it is the
//! smallest decimal with that many digits that does (the decimal ceiling).
//!
//! ```
//! use dpinfer_accountants::RoundedUp;
//! assert_eq!(RoundedUp::fixed(6.719_402_117_939_477).to_string(), "6.719403");
//! assert_eq!(RoundedUp::fixed(0.5).to_string(), "0.500000");
//! assert_eq!(RoundedUp::scientific(6.829_594_983_115_601_5e-3).to_string(), "6.829595e-3");
//! assert_eq!(RoundedUp::scientific(1e-5).to_string(), "1e-5");
//! // Values outside [1e-4, 1e15) are always in scientific notation.
//! assert_eq!(RoundedUp::fixed(2.5e-7).to_string(), "2.5e-7");
//! assert_eq!(RoundedUp::fixed(0.0).to_string(), "0");
//! // 6 significant digits, shortest form (the results folder's summaries and ledger):
//! assert_eq!(RoundedUp::significant(1.000_000_1).to_string(), "1.00001");
//! assert_eq!(RoundedUp::significant(0.00025).to_string(), "0.00025");
//! assert_eq!(RoundedUp::significant(1.234_567_1e-9).to_string(), "1.23457e-9");
//! ```

use core::fmt::{self, Write};

/// A value displayed rounded up to 6 decimals ([`RoundedUp::fixed`]), 7 significant
/// digits ([`RoundedUp::scientific`]) or 6 significant digits in the shortest form
/// ([`RoundedUp::significant`]); see the [module docs](self).
///
/// Zero prints as `0`, non-finite values as Rust prints them (`inf`, `NaN`); trailing zeros
/// of a scientific mantissa are dropped (`1e-5`, `2.5e-3`), fixed notation keeps its 6
/// decimals. Any `f64` is accepted (negative values round towards +∞ as well).
#[derive(Copy, Clone, PartialEq, Debug)]
pub struct RoundedUp {
    value: f64,
    notation: Notation,
}

/// How [`RoundedUp`] writes its value.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Notation {
    Fixed,
    Scientific,
    Significant,
}

impl RoundedUp {
    /// 6 decimals (scientific outside `[1e-4, 1e15)`).
    #[must_use]
    pub fn fixed(value: f64) -> Self {
        Self {
            value,
            notation: Notation::Fixed,
        }
    }

    /// 7 significant digits, `d.dddddde±x`, trailing zeros of the mantissa dropped.
    #[must_use]
    pub fn scientific(value: f64) -> Self {
        Self {
            value,
            notation: Notation::Scientific,
        }
    }

    /// 6 significant digits in the shortest form: trailing zeros dropped (`1`, `1.00001`,
    /// `0.00025`), in fixed notation when the value's decimal exponent is in `[−4, 6)` and as
    /// `d.dddddex` otherwise (`1e-6`, `1.23457e-9`). This is how the CLI's results folder
    /// prints ε and δ.
    #[must_use]
    pub fn significant(value: f64) -> Self {
        Self {
            value,
            notation: Notation::Significant,
        }
    }

    /// The value shown.
    #[must_use]
    pub fn value(self) -> f64 {
        self.value
    }
}

/// A fixed-size text buffer (the longest text written here is 25 bytes: 16 integer digits,
/// a sign, a point and 6 decimals).
struct Buf {
    bytes: [u8; 48],
    len: usize,
}

impl Buf {
    fn new() -> Self {
        Self {
            bytes: [0; 48],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        self.bytes
            .get(..self.len)
            .and_then(|b| core::str::from_utf8(b).ok())
            .unwrap_or("")
    }
}

impl Write for Buf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        let dst = self.bytes.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl fmt::Display for RoundedUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.value;
        if x == 0.0 {
            return f.write_str("0");
        }
        if !x.is_finite() {
            return write!(f, "{x}");
        }
        if self.notation == Notation::Significant {
            return significant(x, f);
        }
        // Very large or small values in scientific notation, never as 300-digit decimals.
        let notation = if (1e-4..1e15).contains(&x.abs()) {
            self.notation
        } else {
            Notation::Scientific
        };
        let Some((t, _)) = ceiling(x, notation) else {
            // Shortest round-trip form: parses back to exactly x.
            return write!(f, "{x}");
        };
        let t = t.as_str();
        match t.split_once('e') {
            Some((m, e)) if m.contains('.') => {
                let m = m.trim_end_matches('0').trim_end_matches('.');
                write!(f, "{m}e{e}")
            }
            _ => f.write_str(t),
        }
    }
}

/// The decimal ceiling of a finite, non-zero `x` in `notation`: `x` written as `{:.6}` (6
/// decimals), `{:.6e}` (7 significant digits) or `{:.5e}` (6 significant digits), at the
/// first of the steps of a quarter of the last printed digit whose text parses back to at
/// least `x` (rounding to nearest cannot skip past the ceiling), with that parsed value;
/// `None` if 64 steps do not get there.
fn ceiling(x: f64, notation: Notation) -> Option<(Buf, f64)> {
    for i in 0..64_u32 {
        let step = f64::from(i);
        let mut t = Buf::new();
        match notation {
            Notation::Fixed => write!(t, "{:.6}", x + step * 0.25e-6),
            Notation::Scientific => write!(t, "{:.6e}", x * (1.0 + step * 0.25e-7)),
            Notation::Significant => write!(t, "{:.5e}", x * (1.0 + step * 0.25e-6)),
        }
        .ok()?;
        if let Some(p) = t.as_str().parse::<f64>().ok().filter(|&p| p >= x) {
            return Some((t, p));
        }
    }
    None
}

/// [`RoundedUp::significant`] of a finite, non-zero `x`: the 6-significant-digit ceiling,
/// printed shortest (Rust's `{}` / `{:e}` of that `f64`), in fixed notation when `x`'s
/// decimal exponent is in `[−4, 6)`.
fn significant(x: f64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    // x's decimal exponent, exactly, from its shortest scientific form.
    let mut e = Buf::new();
    write!(e, "{x:e}")?;
    let mag: i32 = e
        .as_str()
        .split_once('e')
        .and_then(|(_, m)| m.parse().ok())
        .unwrap_or(0);
    match ceiling(x, Notation::Significant) {
        Some((_, up)) if (-4..6).contains(&mag) => write!(f, "{up}"),
        Some((_, up)) => write!(f, "{up:e}"),
        None => write!(f, "{x}"),
    }
}

#[cfg(all(test, feature = "alloc"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use alloc::string::{String, ToString};

    fn show(x: f64, sci: bool) -> String {
        if sci {
            RoundedUp::scientific(x).to_string()
        } else {
            RoundedUp::fixed(x).to_string()
        }
    }

    /// The values the CLI printed before the function moved here.
    #[test]
    fn cli_values() {
        assert_eq!(show(6.719_402_117_939_477, false), "6.719403");
        assert_eq!(show(0.5, false), "0.500000");
        assert_eq!(show(6.829_594_983_115_601_5e-3, true), "6.829595e-3");
        assert_eq!(show(1e-5, true), "1e-5");
        assert_eq!(show(2.5e-3, true), "2.5e-3");
        assert_eq!(show(1.234_567_01e-9, true), "1.234568e-9");
        assert_eq!(show(0.0, true), "0");
        assert_eq!(show(-0.0, false), "0");
        assert_eq!(show(f64::INFINITY, false), "inf");
        assert_eq!(show(f64::NAN, true), "NaN");
        assert_eq!(show(1e300, false), "1e300");
    }

    /// At a printed decimal `d` (exactly representable or not), the value `fl(d)` prints as
    /// `d`, the next `f64` up prints one last digit higher, the next one down still as `d`.
    #[test]
    fn ulp_boundaries() {
        for (d, next) in [
            ("6.719403", "6.719404"),
            ("0.500000", "0.500001"),
            ("5.000000", "5.000001"),
            ("117.972931", "117.972932"),
            ("0.001000", "0.001001"),
            ("999999.999999", "1000000.000000"),
            ("123456789012345.000000", "123456789012345.000001"),
        ] {
            let x: f64 = d.parse().unwrap();
            assert_eq!(show(x, false), d);
            if x - x.next_down() < 1e-6 {
                assert_eq!(show(x.next_down(), false), d, "below {d}");
            }
            let up = show(x.next_up(), false);
            // Where the ulp is coarser than the last digit, the next f64 up can be more than
            // one digit above; it must print at least `next` and parse back ≥ itself.
            assert!(up.parse::<f64>().unwrap() >= x.next_up(), "{d}: {up}");
            if x.next_up() - x < 1e-6 {
                assert_eq!(up, next, "above {d}");
            }
        }
        for (d, next) in [
            ("6.829595e-3", "6.829596e-3"),
            ("1e-5", "1.000001e-5"),
            ("5e0", "5.000001e0"),
            ("2.5e-3", "2.500001e-3"),
            ("9.999999e-5", "1e-4"),
        ] {
            let x: f64 = d.parse().unwrap();
            assert_eq!(show(x, true), d);
            assert_eq!(show(x.next_down(), true), d, "below {d}");
            assert_eq!(show(x.next_up(), true), next, "above {d}");
        }
    }

    /// Never below the value, and the ceiling: one unit less in the last digit is below.
    #[test]
    fn never_below_and_tight() {
        let mut x = 1e-300_f64;
        while x < 1e300 {
            for v in [x, x.next_up(), x.next_down(), x * 1.234_567_891] {
                for sci in [false, true] {
                    let t = show(v, sci);
                    let p: f64 = t.parse().unwrap();
                    assert!(p >= v, "{v:e} {t}");
                }
            }
            x *= 3.7;
        }
        for x in [0.1, 2.5, 117.972_931_4, 6.719_402_117_939_477, 1.000_000_1] {
            let t = show(x, false);
            let p: f64 = t.parse().unwrap();
            assert!(p - 1e-6 < x, "{x} {t}: not the ceiling");
        }
    }

    /// `significant`: 6 significant digits, the decimal ceiling, printed shortest. The
    /// exactly representable-or-not 6-digit decimals print as themselves (the CLI's former
    /// `fmt_up` printed `1e-5` as `1.00001e-5`), the next `f64` up one digit higher.
    #[test]
    fn significant_digits() {
        let sig = |x: f64| RoundedUp::significant(x).to_string();
        for (x, want) in [
            (1.0, "1"),
            (0.999_999_49, "1"),
            (1.000_000_1, "1.00001"),
            (1e-5, "1e-5"),
            (1e-6, "1e-6"),
            (0.00025, "0.00025"),
            (1.234_567_1e-9, "1.23457e-9"),
            (6.719_402_117_939_477, "6.71941"),
            (123_456.7, "123457"),
            (999_999.7, "1000000"),
            (1.5e6, "1.5e6"),
            (2.916_27e23, "2.91627e23"),
            (0.0, "0"),
            (f64::INFINITY, "inf"),
        ] {
            assert_eq!(sig(x), want, "{x:e}");
        }
        let mut x = 1e-300_f64;
        while x < 1e300 {
            let d: f64 = sig(x).parse().unwrap();
            assert!(d >= x, "{x:e}");
            // six-digit decimals print as themselves, the next f64 up one unit higher
            assert_eq!(sig(d), sig(d.next_down()), "{d:e}");
            assert!(sig(d.next_up()).parse::<f64>().unwrap() > d, "{d:e}");
            x *= 3.7;
        }
    }
}
