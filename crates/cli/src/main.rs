//! The `dpinfer` command-line program.

mod shard;
mod summary;
mod svg;

fn main() {
    println!("dpinfer {}", env!("CARGO_PKG_VERSION"));
}
