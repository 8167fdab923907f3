//! no_std smoke test for the dpinfer core crates.
//!
//! Built for `wasm32-unknown-unknown` (and run under node by `run.mjs`) and for
//! `thumbv7em-none-eabihf` (build-only). The exported [`verify`] runs every check module in
//! [`CHECKS`] — real library code compared with independent high-precision values — and
//! returns `0` when all pass, otherwise the first failure code `module * 1000 + check`.
//!
//! # Adding a crate
//! Add the dependency (with `default-features = false`) to `Cargo.toml`, write
//! `src/<crate>.rs` with `pub(crate) fn verify() -> u32` (return `0` or the 1-based index of
//! the first failing check, each check against a value computed independently, e.g. mpmath),
//! then add a `mod` line and an entry to [`CHECKS`] with a new module number.
#![no_std]

extern crate alloc;

mod accountants;
mod math;

/// Check modules: `(module number, check function)`. The module number becomes the
/// thousands of the failure code. Other crates append theirs here.
const CHECKS: &[(u32, fn() -> u32)] = &[(1, math::verify), (2, accountants::verify)];

/// Runs every check; `0` on success, else `module * 1000 + failing check index`.
#[unsafe(no_mangle)]
pub extern "C" fn verify() -> u32 {
    for &(module, check) in CHECKS {
        let code = check();
        if code != 0 {
            return module * 1000 + code;
        }
    }
    0
}

/// `true` when `got` is within `rel_tol` (relative) of `want`; NaN or a sign flip fails.
pub(crate) fn close(got: f64, want: f64, rel_tol: f64) -> bool {
    if !got.is_finite() || !want.is_finite() {
        return false;
    }
    let scale = if want == 0.0 { 1.0 } else { want.abs() };
    (got - want).abs() <= rel_tol * scale
}

/// Runs `(got, want, rel_tol)` rows in order; `0` or the 1-based index of the first miss.
pub(crate) fn first_failure(rows: &[(f64, f64, f64)]) -> u32 {
    let mut index = 0u32;
    for &(got, want, tol) in rows {
        index += 1;
        if !close(got, want, tol) {
            return index;
        }
    }
    0
}

#[cfg(any(target_arch = "wasm32", target_os = "none"))]
mod runtime {
    //! Bare-metal runtime pieces a `cdylib` needs: an allocator and a panic handler.
    //! Never part of a library: only this smoke crate defines them.

    use core::alloc::{GlobalAlloc, Layout};
    use core::cell::UnsafeCell;
    use core::sync::atomic::{AtomicUsize, Ordering};

    const ARENA_SIZE: usize = 1 << 22;

    /// A bump allocator over a fixed static arena; `dealloc` is a no-op.
    struct Bump {
        arena: UnsafeCell<[u8; ARENA_SIZE]>,
        next: AtomicUsize,
    }

    // SAFETY: `next` is advanced atomically, so concurrent callers get disjoint ranges.
    unsafe impl Sync for Bump {}

    // SAFETY: returns either null or a pointer to `layout.size()` bytes inside the arena,
    // aligned to `layout.align()`, never handed out twice.
    unsafe impl GlobalAlloc for Bump {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let base = self.arena.get().cast::<u8>() as usize;
            let mut current = self.next.load(Ordering::Relaxed);
            loop {
                let start = (base + current).next_multiple_of(layout.align()) - base;
                let Some(end) = start.checked_add(layout.size()) else {
                    return core::ptr::null_mut();
                };
                if end > ARENA_SIZE {
                    return core::ptr::null_mut();
                }
                match self.next.compare_exchange_weak(
                    current,
                    end,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    // SAFETY: `start..end` lies inside the arena (checked above).
                    Ok(_) => return unsafe { self.arena.get().cast::<u8>().add(start) },
                    Err(seen) => current = seen,
                }
            }
        }

        unsafe fn dealloc(&self, _ptr: *mut u8, _layout: Layout) {}
    }

    #[global_allocator]
    static ALLOCATOR: Bump = Bump {
        arena: UnsafeCell::new([0; ARENA_SIZE]),
        next: AtomicUsize::new(0),
    };

    #[panic_handler]
    fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
        #[cfg(target_arch = "wasm32")]
        core::arch::wasm32::unreachable();
        #[cfg(not(target_arch = "wasm32"))]
        loop {
            core::hint::spin_loop();
        }
    }
}
