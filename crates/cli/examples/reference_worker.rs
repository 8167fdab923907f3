//! A compiled external simulator for `dpinfer` (`[model] kind = "command"`): the reference
//! worker of `dpinfer-workers` (the gaussian-mean model's simulator behind the worker
//! protocol, with the fault injection of `dpinfer_workers::reference`), built with the CLI's
//! examples so that the CLI's end-to-end tests can run it (named apart from the workers
//! crate's `worker_gaussian` example: two examples of one name collide in `target/`).
//!
//! Build: `cargo build --release -p dpinfer-cli --example reference_worker`.

fn main() -> std::process::ExitCode {
    dpinfer_workers::reference::main()
}
