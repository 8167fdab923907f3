//! `cargo xtask`: every check the project runs.

fn main() {
    println!("xtask: tasks arrive with the foundation issue");
}
