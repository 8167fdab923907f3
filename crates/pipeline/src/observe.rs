//! What a run tells its caller while it works: progress notes, warnings, a user model's
//! fatal errors, and the progress of its long steps. The `dpinfer` command prints them
//! ([`Stderr`], what [`run`](crate::run()) and [`Config::parse`](crate::Config::parse) use); a
//! library caller chooses with [`run_with`](crate::run::run_with) and
//! [`Config::parse_with`](crate::Config::parse_with): [`Quiet`], or its own [`Observer`]
//! (a Python front end forwarding warnings to `warnings.warn`, progress to a notebook bar).
//!
//! An observer only hears about the run; nothing it does changes a number or a file.

use std::sync::{Arc, Mutex};

use indicatif::{ProgressBar, ProgressStyle};

/// Hears a run's notes and progress. Every method may be called from worker threads.
pub trait Observer: Send + Sync {
    /// One line of text, without a newline: a progress note (`public step: 400 pairs in
    /// 0.1 s`), a warning (`warning: …`) or a user model's fatal error (`error: …`).
    fn note(&self, line: &str);

    /// A long step of `total` units starts (`what`: `"simulating pairs"`, `"sampling"`).
    fn start(&self, what: &str, total: u64) {
        let _ = (what, total);
    }

    /// `units` more units of the current step are done.
    fn advance(&self, units: u64) {
        let _ = units;
    }

    /// The current step ended.
    fn finish(&self) {}
}

/// Hears nothing: a library caller that runs quietly.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quiet;

impl Observer for Quiet {
    fn note(&self, _: &str) {}
}

/// Notes on stderr (write errors ignored: a note never aborts a run) and a progress bar
/// that is drawn only when stderr is a terminal: the `dpinfer` command's behaviour.
#[derive(Debug, Default)]
pub struct Stderr {
    bar: Mutex<Option<ProgressBar>>,
}

impl Stderr {
    /// A shared [`Stderr`] observer.
    #[must_use]
    pub fn shared() -> Arc<dyn Observer> {
        Arc::new(Self::default())
    }

    fn with_bar(&self, f: impl FnOnce(&mut Option<ProgressBar>)) {
        // A poisoned lock only means another thread panicked mid-update: keep going.
        let mut g = self
            .bar
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut g);
    }
}

impl Observer for Stderr {
    fn note(&self, line: &str) {
        crate::stderr_write(format_args!("{line}\n"));
    }

    fn start(&self, what: &str, total: u64) {
        let pb = ProgressBar::new(total);
        if let Ok(style) = ProgressStyle::with_template(
            "{msg} [{elapsed_precise}] {wide_bar} {pos}/{len} (eta {eta})",
        ) {
            pb.set_style(style);
        }
        pb.set_message(what.to_string());
        self.with_bar(|b| {
            if let Some(old) = b.replace(pb) {
                old.finish_and_clear();
            }
        });
    }

    fn advance(&self, units: u64) {
        self.with_bar(|b| {
            if let Some(pb) = b {
                pb.inc(units);
            }
        });
    }

    fn finish(&self) {
        self.with_bar(|b| {
            if let Some(pb) = b.take() {
                pb.finish_and_clear();
            }
        });
    }
}

/// An observer as the progress of a library MCMC run.
pub(crate) struct McmcProgress<'a>(pub(crate) &'a dyn Observer);

impl dpinfer::mcmc::Progress for McmcProgress<'_> {
    fn advanced(&self, _: usize, iterations: u64) {
        self.0.advance(iterations);
    }
}

/// A shared observer with a `Debug` (held by a user model, whose workers report fatal
/// errors through it).
#[derive(Clone)]
pub(crate) struct Shared(pub(crate) Arc<dyn Observer>);

impl core::fmt::Debug for Shared {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Observer")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the units it hears of.
    #[derive(Default)]
    struct Units(std::sync::atomic::AtomicU64);

    impl Observer for Units {
        fn note(&self, _: &str) {}
        fn advance(&self, units: u64) {
            self.0
                .fetch_add(units, std::sync::atomic::Ordering::Relaxed);
        }
    }

    #[test]
    fn mcmc_progress_forwards_iterations() {
        use dpinfer::mcmc::Progress as _;
        let units = Units::default();
        McmcProgress(&units).advanced(3, 17);
        McmcProgress(&units).advanced(0, 5);
        assert_eq!(units.0.into_inner(), 22);
    }

    #[test]
    fn stderr_bar_lifecycle_never_panics() {
        let s = Stderr::default();
        s.advance(5); // no step started: ignored
        s.start("a", 10);
        s.advance(4);
        s.start("b", 3); // replaces the unfinished bar
        s.finish();
        s.finish();
        s.advance(1);
        Quiet.note("x");
    }
}
