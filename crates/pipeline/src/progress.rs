//! The progress bar on stderr (drawn only when stderr is a terminal).

use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar of `total` steps labelled `what`.
pub(crate) fn bar(total: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(total);
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{elapsed_precise}] {wide_bar} {pos}/{len} (eta {eta})")
    {
        pb.set_style(style);
    }
    pb.set_message(what.to_string());
    pb
}

/// A progress bar as the observer of a library MCMC run.
pub(crate) struct Bar(pub(crate) ProgressBar);

impl dpinfer::mcmc::Progress for Bar {
    fn advanced(&self, _: usize, iterations: u64) {
        self.0.inc(iterations);
    }
}
