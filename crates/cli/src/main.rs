//! The `dpinfer` command-line program.

fn main() {
    println!("dpinfer {}", env!("CARGO_PKG_VERSION"));
}
