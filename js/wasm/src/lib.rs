//! The wasm exports of the JavaScript package: bytes in linear memory in and out of
//! [`Session::call`]. All logic (and all its tests) is in `dpinfer-accountants-wasm`.
//!
//! Protocol (used by `js/index.js`): `dpinfer_alloc(len)` returns a buffer of `len` bytes
//! (0 if memory is exhausted); the caller writes a UTF-8 JSON request there and calls
//! `dpinfer_call(ptr, len)`, which takes the buffer back (frees it) and returns the length of
//! the JSON response at `dpinfer_result()`, valid until the next call.
#![no_std]

extern crate alloc;

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::UnsafeCell;

use dpinfer_accountants_wasm::Session;

#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

/// The module's one session and the last response.
struct State {
    session: Session,
    response: String,
}

struct Global(UnsafeCell<State>);

// SAFETY: wasm32-unknown-unknown without the atomics feature has one thread; the state is
// only touched from the exports below, which never run concurrently or re-entrantly.
unsafe impl Sync for Global {}

static STATE: Global = Global(UnsafeCell::new(State {
    session: Session::new(),
    response: String::new(),
}));

/// A zeroed buffer of `len` bytes for a request, or null when memory is exhausted.
#[unsafe(no_mangle)]
pub extern "C" fn dpinfer_alloc(len: usize) -> *mut u8 {
    let mut v: Vec<u8> = Vec::new();
    if v.try_reserve_exact(len).is_err() {
        return core::ptr::null_mut();
    }
    v.resize(len, 0);
    Box::into_raw(v.into_boxed_slice()).cast::<u8>()
}

/// Answers the request in the buffer `ptr[..len]` from [`dpinfer_alloc`] (and frees it);
/// returns the response's length (the bytes are at [`dpinfer_result`]).
///
/// # Safety
/// `ptr` and `len` must be a buffer returned by `dpinfer_alloc(len)`, not yet passed here.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dpinfer_call(ptr: *mut u8, len: usize) -> usize {
    // SAFETY: per the contract, `ptr[..len]` is the boxed slice `dpinfer_alloc(len)` leaked.
    let request: Box<[u8]> =
        unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, len)) };
    // SAFETY: single-threaded, not re-entrant (see `Global`): no other reference exists.
    let state = unsafe { &mut *STATE.0.get() };
    state.response = match core::str::from_utf8(&request) {
        Ok(text) => state.session.call(text),
        Err(_) => Session::invalid_utf8(),
    };
    drop(request);
    state.response.len()
}

/// The last response's bytes (its length was returned by [`dpinfer_call`]).
#[unsafe(no_mangle)]
pub extern "C" fn dpinfer_result() -> *const u8 {
    // SAFETY: as in `dpinfer_call`; only a pointer is read.
    unsafe { (*STATE.0.get()).response.as_ptr() }
}

#[cfg(target_arch = "wasm32")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // No code path of the library panics on any input (tested natively); should one ever,
    // trap: the JavaScript wrapper turns the trap into an Error and refuses further calls.
    core::arch::wasm32::unreachable()
}
