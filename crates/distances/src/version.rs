//! The version of the crate's transcendental kernels ([`KernelVersion`]) and of the random-feature
//! distance's rounding allowance ([`AllowanceVersion`]).

use crate::DistanceError;

/// `LATEST`, `number` and `TryFrom<u32>` of a version enum whose variants are listed with
/// their numbers (the last one is `LATEST`) and whose unknown numbers are refused with the
/// [`DistanceError`] variant `$unknown`.
macro_rules! version_numbers {
    ($t:ident, $unknown:ident, [$($v:ident = $n:literal),+], latest = $latest:ident) => {
        impl $t {
            /// The newest version (what new work should use).
            pub const LATEST: Self = Self::$latest;

            /// The version's number (1, 2, …), as a config or ledger records it.
            #[must_use]
            pub const fn number(self) -> u32 {
                match self {
                    $(Self::$v => $n,)+
                }
            }
        }

        impl TryFrom<u32> for $t {
            type Error = DistanceError;

            /// The version with this number.
            ///
            /// # Errors
            #[doc = concat!("[`DistanceError::", stringify!($unknown), "`] for a number that names no version.")]
            fn try_from(number: u32) -> Result<Self, DistanceError> {
                match number {
                    $($n => Ok(Self::$v),)+
                    _ => Err(DistanceError::$unknown { number }),
                }
            }
        }
    };
}

/// Version of the fast `exp` and `sin`/`cos` inside the kernels: which operations turn a
/// squared distance into a Gaussian (or Laplace, Matérn) kernel value and a phase into a
/// random feature. Everything else — sanitising, lane order, summation order, clamping — is
/// the same in every version, and each version gives the same bits on every target and every
/// [`crate::simd`] level.
///
/// A seeded or published distance is reproducible from its data, parameters and this version.
/// [`KernelVersion::V1`] is the default, so every value computed before version 2 existed is
/// reproduced unchanged. For new work: [`KernelVersion::V3`] (the [`KernelVersion::LATEST`])
/// for the `exp` kernels on a CPU with FMA (every x86-64-v3 or -v4 CPU: its `exp` fuses each
/// `a·b + c` into one correctly rounded operation, 21 operations per value instead of 32),
/// [`KernelVersion::V2`] on a CPU without FMA (there version 3's portable code calls a library
/// `fma` per operation and is about 11× slower, crate README run I). Version 2's `exp` takes 32 operations
/// per value instead of 42 and its `sincos` 48 instead of 58; version 3's `sincos` is version
/// 2's (same random features, bit for bit). The crate README's benchmarks measure what each
/// buys. All versions keep the same error budget (`≤ 1e-15` per kernel or feature value, what
/// [`crate::sensitivity::rounding_slack`] allows), so every sensitivity and bound is the same.
/// Pick it per kernel with `with_kernel_version` ([`crate::Gaussian::with_kernel_version`],
/// [`crate::Laplace`], [`crate::Matern32`],
/// [`crate::RandomFourierFeatures::with_kernel_version`]) and record
/// [`KernelVersion::number`] with the result.
///
/// | version | `exp` (`x ≤ 0`) | `sin`, `cos` (`|t| ≤ 8e5`) |
/// |---|---|---|
/// | 1 | Cody–Waite (two parts), degree-12 Taylor, relative error `< 1e-15`; `0` below `−708` | fdlibm's kernels after a three-part reduction, absolute error `< 4e-16` |
/// | 2 | one-constant reduction, degree-10 minimax, absolute error `< 7.6e-16`; `e^{−708}` below `−708` | two-part reduction, degree-13/12 minimax, absolute error `< 4e-16` |
/// | 3 | version 2's with fused multiply-adds (FMA), absolute error `< 7.6e-16` | version 2's |
///
/// ```
/// use dpinfer_distances::{Gaussian, Kernel, KernelVersion};
/// let v1 = Gaussian::new(1.0)?;
/// let v2 = Gaussian::new(1.0)?.with_kernel_version(KernelVersion::V2);
/// let v3 = Gaussian::new(1.0)?.with_kernel_version(KernelVersion::V3);
/// assert_eq!(v1.kernel_version(), KernelVersion::V1); // the default
/// let (a, b, c) = (v1.eval(&[0.0], &[0.7]), v2.eval(&[0.0], &[0.7]), v3.eval(&[0.0], &[0.7]));
/// assert!((a - b).abs() < 1e-15); // same value to the stated error, maybe not the same bits
/// assert!((a - c).abs() < 1e-15);
/// assert_eq!(KernelVersion::try_from(2)?, KernelVersion::V2);
/// assert_eq!(KernelVersion::LATEST.number(), 3);
/// assert!(KernelVersion::try_from(4).is_err());
/// # Ok::<(), dpinfer_distances::DistanceError>(())
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KernelVersion {
    /// Version 1: the kernels of every release before version 2 existed.
    #[default]
    V1,
    /// Version 2: cheaper reductions and minimax polynomials, same error budget.
    V2,
    /// Version 3: version 2's `exp` with every `a·b + c` fused (FMA, correctly rounded on
    /// every level); `sin`/`cos` are version 2's. Fast where the CPU has FMA (x86-64-v3 and
    /// -v4), slow on the portable level (a library `fma` call per operation).
    V3,
}

version_numbers!(
    KernelVersion,
    UnknownKernelVersion,
    [V1 = 1, V2 = 2, V3 = 3],
    latest = V3
);

/// Version of the floating-point rounding allowance that [`crate::RffReference::sensitivity`]
/// adds to the random-feature MMD's `Δ = 2/N`: which bound on `|ρ̃ − ρ|` (computed against
/// exact distance) is used. It changes no distance, only the reported sensitivity, and so
/// the noise a mechanism calibrates to it.
///
/// | version | allowance | `N = m = 5 000` | `N = m = 500 000` (`Δ = 4e-6`) |
/// |---|---|---|---|
/// | 1 (default) | [`crate::sensitivity::rounding_slack`]: `2√η`, the exact MMD²'s bound carried over (square root of an error linear in `u·n`) | `3.0e-6` | `3.0e-5` |
/// | 2 | [`crate::sensitivity::rff_rounding_allowance`]: `2η_RFF`, linear in `u·n/8` for 1-D rows, derived for the feature means the code computes | `3.3e-13` | `2.8e-11` |
///
/// Version 1 is the default: every seeded private release made before version 2 existed
/// calibrated its noise to it, so changing the default would move every pinned RFF release.
/// Version 2 is what a large `N` needs (with version 1 `Δ` stops near `3e-5` whatever `N`).
/// Both are upper bounds, so both are private; version 2 is the tighter. Record
/// [`AllowanceVersion::number`] with a release.
///
/// ```
/// use dpinfer_distances::{AllowanceVersion, RandomFourierFeatures, RffReference, Rows};
/// let z = [0.3, -1.2, 0.7];
/// let f = RandomFourierFeatures::new(&z, 1, 1.0)?;
/// let obs = [0.5; 1000];
/// let r1 = RffReference::new_in(f, Rows::one_dim(&obs)?, [0.0; 6])?;
/// assert_eq!(r1.allowance_version(), AllowanceVersion::V1); // the default
/// let r2 = r1.clone().with_allowance_version(AllowanceVersion::V2);
/// let (s1, s2) = (r1.sensitivity().value(), r2.sensitivity().value());
/// assert!(2.0 / 1000.0 < s2 && s2 < s1);
/// assert!(s2 < 2.0 / 1000.0 * (1.0 + 1e-9));
/// assert_eq!(AllowanceVersion::try_from(2)?, AllowanceVersion::V2);
/// assert!(AllowanceVersion::try_from(3).is_err());
/// # Ok::<(), dpinfer_distances::DistanceError>(())
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AllowanceVersion {
    /// Version 1: [`crate::sensitivity::rounding_slack`] (every release before version 2).
    #[default]
    V1,
    /// Version 2: [`crate::sensitivity::rff_rounding_allowance`].
    V2,
}

version_numbers!(
    AllowanceVersion,
    UnknownAllowanceVersion,
    [V1 = 1, V2 = 2],
    latest = V2
);

/// `with_kernel_version` and `kernel_version` for a type whose `version: KernelVersion` field
/// picks its transcendental functions (the kernels and the random features).
macro_rules! kernel_version_api {
    ($t:ty, $what:literal, $fns:literal) => {
        impl $t {
            #[doc = concat!("The same ", $what, " evaluated with `version`'s ", $fns)]
            #[doc = "(see [`KernelVersion`]; the default is [`KernelVersion::V1`]). Every bound,"]
            #[doc = "sensitivity and error budget is the same in every version."]
            #[must_use]
            pub const fn with_kernel_version(mut self, version: KernelVersion) -> Self {
                self.version = version;
                self
            }

            #[doc = concat!("The [`KernelVersion`] this ", $what, " is evaluated with.")]
            #[must_use]
            pub const fn kernel_version(&self) -> KernelVersion {
                self.version
            }
        }
    };
}
pub(crate) use kernel_version_api;

/// One version's transcendental functions; the hot loops are generic over it, so each
/// version's loop is compiled (and vectorised) on its own and the version is matched once
/// per call, outside the loop.
pub(crate) trait Transcendentals {
    /// `exp(x)` for `x ≤ 0` (see `fastexp`).
    fn exp_nonpos(x: f64) -> f64;
    /// `(sin t, cos t)` for `|t| ≤ FAST_LIMIT` (see `fastsincos`); callers check the range.
    fn sincos_small(t: f64) -> (f64, f64);
    /// `(sin t, cos t)` for any finite `t`: [`Transcendentals::sincos_small`] within
    /// `FAST_LIMIT`, `libm` beyond it (the same in every version).
    #[inline(always)]
    fn sincos(t: f64) -> (f64, f64) {
        if t.abs() <= crate::fastsincos::FAST_LIMIT {
            Self::sincos_small(t)
        } else {
            libm::sincos(t)
        }
    }
}

/// [`KernelVersion::V1`]'s functions.
pub(crate) struct V1;
/// [`KernelVersion::V2`]'s functions.
pub(crate) struct V2;
/// [`KernelVersion::V3`]'s functions: its own `exp`, version 2's `sincos`.
pub(crate) struct V3;

impl Transcendentals for V1 {
    #[inline(always)]
    fn exp_nonpos(x: f64) -> f64 {
        crate::fastexp::exp_nonpos_v1(x)
    }
    #[inline(always)]
    fn sincos_small(t: f64) -> (f64, f64) {
        crate::fastsincos::sincos_small(t)
    }
}

impl Transcendentals for V2 {
    #[inline(always)]
    fn exp_nonpos(x: f64) -> f64 {
        crate::fastexp::exp_nonpos_v2(x)
    }
    #[inline(always)]
    fn sincos_small(t: f64) -> (f64, f64) {
        crate::fastsincos::sincos_small_v2(t)
    }
}

impl Transcendentals for V3 {
    #[inline(always)]
    fn exp_nonpos(x: f64) -> f64 {
        crate::fastexp::exp_nonpos_v3(x)
    }
    #[inline(always)]
    fn sincos_small(t: f64) -> (f64, f64) {
        crate::fastsincos::sincos_small_v2(t)
    }
}
