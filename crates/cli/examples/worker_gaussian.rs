//! A compiled external simulator for `dpinfer` (`[model] kind = "command"`): the reference
//! worker of `dpinfer-workers` (the gaussian-mean model's simulator behind the worker
//! protocol, with the fault injection of `dpinfer_workers::reference`), built with the CLI's
//! examples so that the CLI's end-to-end tests can run it.
//!
//! Build: `cargo build --release -p dpinfer-cli --example worker_gaussian`.

fn main() -> std::process::ExitCode {
    dpinfer_workers::reference::main()
}
