//! The compiled reference worker ([`dpinfer_workers::reference`]): the gaussian-mean model's
//! simulator behind the worker protocol, with the fault injection the pool's tests use.
//!
//! Build: `cargo build --release -p dpinfer-workers --example worker_gaussian`.

fn main() -> std::process::ExitCode {
    dpinfer_workers::reference::main()
}
