//! Runtime instruction-set dispatch for the hot kernels (Gram sums, random-feature sums,
//! median-heuristic distances), with no `unsafe` in this crate.
//!
//! The kernels are written once, as portable scalar Rust with a **fixed lane count and
//! summation order** (chunks of 8 rows, four accumulator lanes for kernel sums with row `i`
//! in lane `i mod 4`, eight lanes for 1-D random-feature sums, compensated row sums in row
//! order) and only `+ − × ÷ √` (Rust never contracts `a·b + c` into an FMA) — except
//! [`crate::KernelVersion::V3`]'s `exp`, which calls the correctly rounded `mul_add`
//! explicitly, whose result is the same number on every level. With the `std` feature (default)
//! each hot loop is compiled a second and third time with x86-64-v3 (AVX2, 4 × f64) and
//! x86-64-v4 (AVX-512, 8 × f64) enabled, by `pulp`'s safe `#[target_feature]` wrappers, and
//! the best level the CPU supports is picked at run time. Because every level evaluates the
//! same operations in the same order, results are **bit-identical** across levels and to the
//! portable build (`tests/suite/value_stability.rs` checks this on every level the machine has).
//! Without `std` (embedded, `wasm32`) only the portable code exists, with the same lane
//! order, so it gives the same bits too. On targets other than x86-64 the portable code is
//! used (aarch64's baseline already has 2 × f64 NEON).
//!
//! The `Level` / `with_level` API (std only) exists to make the bit-identity checkable and
//! to benchmark the levels side by side; it never changes a number.

/// A hot loop run under [`dispatch`]: `run` must be `#[inline(always)]` so its body is
/// compiled inside the `#[target_feature]` function of each level.
pub(crate) trait Job {
    type Output;
    fn run(self) -> Self::Output;
}

/// An instruction-set level of the runtime dispatch (std only; see the module docs).
#[cfg(feature = "std")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Level {
    /// The build's baseline code (SSE2 on a default x86-64 build).
    Portable,
    /// x86-64-v3: AVX2 (4 × f64 lanes) and FMA (used by [`crate::KernelVersion::V3`] only).
    X86V3,
    /// x86-64-v4: AVX-512F/BW/CD/DQ/VL (8 × f64 lanes).
    X86V4,
}

#[cfg(feature = "std")]
std::thread_local! {
    static FORCED: core::cell::Cell<Option<Level>> = const { core::cell::Cell::new(None) };
}

/// The CPU's instruction-set tokens, detected once per process (a dispatch then costs a
/// thread-local read and a match, not a feature probe).
#[cfg(all(feature = "std", target_arch = "x86_64"))]
#[derive(Clone, Copy)]
struct Tokens {
    v3: Option<pulp::x86::V3>,
    v4: Option<pulp::x86::V4>,
}

#[cfg(all(feature = "std", target_arch = "x86_64"))]
fn tokens() -> Tokens {
    static TOKENS: std::sync::OnceLock<Tokens> = std::sync::OnceLock::new();
    *TOKENS.get_or_init(|| Tokens {
        v3: pulp::x86::V3::try_new(),
        v4: pulp::x86::V4::try_new(),
    })
}

#[cfg(feature = "std")]
impl Level {
    /// The best level this CPU supports (what the kernels use unless [`with_level`] says
    /// otherwise).
    #[must_use]
    pub fn detected() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            let t = tokens();
            if t.v4.is_some() {
                return Self::X86V4;
            }
            if t.v3.is_some() {
                return Self::X86V3;
            }
        }
        Self::Portable
    }

    /// Whether this CPU can run `self`.
    #[must_use]
    pub fn is_available(self) -> bool {
        match self {
            Self::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Self::X86V3 => tokens().v3.is_some(),
            #[cfg(target_arch = "x86_64")]
            Self::X86V4 => tokens().v4.is_some(),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// Every level this CPU can run, lowest first.
    #[must_use]
    pub fn available() -> alloc::vec::Vec<Self> {
        [Self::Portable, Self::X86V3, Self::X86V4]
            .into_iter()
            .filter(|l| l.is_available())
            .collect()
    }

    /// The level the kernels use on the calling thread now.
    #[must_use]
    pub fn current() -> Self {
        FORCED
            .with(core::cell::Cell::get)
            .unwrap_or_else(Self::detected)
    }
}

/// Runs `f` with the kernels of the calling thread dispatched to `level` (for checking
/// bit-identity and benchmarking; results never depend on the level). Returns `None`, without
/// running `f`, if this CPU cannot run `level`. Nests; threads spawned inside `f` use the
/// detected level, except the crate's own `parallel` workers, which inherit the caller's.
#[cfg(feature = "std")]
pub fn with_level<R>(level: Level, f: impl FnOnce() -> R) -> Option<R> {
    struct Restore(Option<Level>);
    impl Drop for Restore {
        fn drop(&mut self) {
            FORCED.with(|c| c.set(self.0));
        }
    }
    if !level.is_available() {
        return None;
    }
    let _restore = Restore(FORCED.with(|c| c.replace(Some(level))));
    Some(f())
}

/// Runs `job` on the calling thread's [`Level`] (std), or portably (no std).
#[inline]
pub(crate) fn dispatch<J: Job>(job: J) -> J::Output {
    #[cfg(feature = "std")]
    {
        dispatch_at(Level::current(), job)
    }
    #[cfg(not(feature = "std"))]
    {
        job.run()
    }
}

/// Runs `job` at `level` (falling back to the portable code if the CPU lacks it).
#[cfg(feature = "std")]
#[inline]
pub(crate) fn dispatch_at<J: Job>(level: Level, job: J) -> J::Output {
    struct Op<J>(J);
    impl<J: Job> pulp::WithSimd for Op<J> {
        type Output = J::Output;
        #[inline(always)]
        fn with_simd<S: pulp::Simd>(self, _simd: S) -> J::Output {
            self.0.run()
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        use pulp::Simd;
        let t = tokens();
        match level {
            Level::X86V4 => {
                if let Some(s) = t.v4 {
                    return Simd::vectorize(s, Op(job));
                }
            }
            Level::X86V3 => {
                if let Some(s) = t.v3 {
                    return Simd::vectorize(s, Op(job));
                }
            }
            Level::Portable => {}
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = level;
    job.run()
}
