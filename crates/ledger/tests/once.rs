//! The once-only protocol from outside the crate: every refusal of `guarded` and `once_start`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::std_instead_of_core,
    missing_docs
)]

use std::cell::Cell;
use std::path::{Path, PathBuf};

use dpinfer_ledger::{
    Claimed, DirLock, Error, LEDGER_FILE, Ledger, RELEASE_FILE, guarded, once_done, once_start,
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize)]
struct Rel {
    value: f64,
    ledger: Ledger,
}
impl Claimed for Rel {
    fn ledger(&self) -> &Ledger {
        &self.ledger
    }
}

fn fresh(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dpinfer-ledger-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn claim(eps_label: &str) -> Ledger {
    Ledger::not_private(eps_label)
}

/// Runs `guarded` with a closure that counts its calls.
fn run(lock: &DirLock, fp: &str, l: &Ledger, calls: &Cell<u32>) -> Result<(Rel, bool), Error> {
    guarded(lock, fp, l, || -> Result<Rel, std::io::Error> {
        calls.set(calls.get() + 1);
        Ok(Rel {
            value: 0.25 + f64::from(calls.get()),
            ledger: l.clone(),
        })
    })
}

fn edit(path: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

#[test]
fn a_release_is_drawn_once_and_then_reproduced_or_refused() {
    let dir = fresh("guarded");
    let lock = DirLock::acquire(&dir).unwrap();
    let l = claim("demo");
    let calls = Cell::new(0);
    let (a, rep) = run(&lock, "fp-a", &l, &calls).unwrap();
    assert!(!rep);
    let (b, rep) = run(&lock, "fp-a", &l, &calls).unwrap();
    assert!(rep);
    assert_eq!(a.value.to_bits(), b.value.to_bits());
    assert_eq!(calls.get(), 1);
    let ledger: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join(LEDGER_FILE)).unwrap()).unwrap();
    assert_eq!(ledger["version"], 2);
    assert_eq!(ledger["status"], "released");

    // Another input.
    assert!(matches!(
        run(&lock, "fp-b", &l, &calls),
        Err(Error::DifferentInput(_))
    ));
    // Another claim for the same input (settings that changed the privacy ledger).
    assert!(matches!(
        run(&lock, "fp-a", &claim("other"), &calls),
        Err(Error::ClaimMismatch { .. })
    ));
    // A damaged release.
    let good = std::fs::read(dir.join(RELEASE_FILE)).unwrap();
    let mut bad = good.clone();
    bad[5] ^= 1;
    std::fs::write(dir.join(RELEASE_FILE), &bad).unwrap();
    assert!(matches!(
        run(&lock, "fp-a", &l, &calls),
        Err(Error::ReleaseChecksum(_))
    ));
    std::fs::write(dir.join(RELEASE_FILE), &good).unwrap();
    // A crash after `started`.
    edit(&dir.join(LEDGER_FILE), |v| v["status"] = "started".into());
    let e = run(&lock, "fp-a", &l, &calls).unwrap_err();
    assert!(matches!(e, Error::Unfinished { .. }));
    assert!(e.to_string().contains("did not finish"), "{e}");
    // A ledger of version 1 (no version field, an FNV fingerprint).
    edit(&dir.join(LEDGER_FILE), |v| {
        v.as_object_mut().unwrap().remove("version");
        v["status"] = "released".into();
    });
    let e = run(&lock, "fp-a", &l, &calls).unwrap_err();
    assert!(matches!(e, Error::LedgerVersion { found: 1, .. }), "{e}");
    assert!(e.to_string().contains("ledger version 1"), "{e}");
    // A corrupt ledger.
    std::fs::write(dir.join(LEDGER_FILE), b"{not json").unwrap();
    assert!(matches!(
        run(&lock, "fp-a", &l, &calls),
        Err(Error::Corrupt { what: "ledger", .. })
    ));
    // None of these drew.
    assert_eq!(calls.get(), 1);
    drop(lock);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_draw_leaves_the_ledger_started() {
    let dir = fresh("failed");
    let lock = DirLock::acquire(&dir).unwrap();
    let l = claim("demo");
    let r = guarded(&lock, "fp", &l, || -> Result<Rel, std::io::Error> {
        Err(std::io::Error::other("entropy unavailable"))
    });
    let e = r.unwrap_err();
    assert!(matches!(e, Error::Caller { writing: None, .. }));
    assert_eq!(e.to_string(), "entropy unavailable");
    // The noise may have been drawn before the failure: refuse from now on.
    let calls = Cell::new(0);
    assert!(matches!(
        run(&lock, "fp", &l, &calls),
        Err(Error::Unfinished { .. })
    ));
    assert_eq!(calls.get(), 0);
    assert!(!dir.join(RELEASE_FILE).exists());
    // A release whose ledger is not the stated claim is not recorded as released.
    let dir2 = fresh("changed");
    let lock2 = DirLock::acquire(&dir2).unwrap();
    let r = guarded(&lock2, "fp", &l, || -> Result<Rel, std::io::Error> {
        Ok(Rel {
            value: 1.0,
            ledger: claim("something else"),
        })
    });
    assert!(matches!(r, Err(Error::ClaimChanged)));
    assert!(!dir2.join(RELEASE_FILE).exists());
    drop((lock, lock2));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
}

#[test]
fn once_only_releases_refuse_every_rerun() {
    let dir = fresh("once");
    let lock = DirLock::acquire(&dir).unwrap();
    once_start(&lock, "fp", "MCMC").unwrap();
    let e = once_start(&lock, "fp", "MCMC").unwrap_err();
    assert!(matches!(e, Error::AlreadyReleased { ref status, .. } if status == "started"));
    once_done(&lock, "fp").unwrap();
    let e = once_start(&lock, "fp", "MCMC").unwrap_err();
    assert!(matches!(e, Error::AlreadyReleased { ref status, .. } if status == "released"));
    assert!(
        e.to_string()
            .contains("already holds a private MCMC release"),
        "{e}"
    );
    assert!(matches!(
        once_start(&lock, "other", "MCMC"),
        Err(Error::DifferentInput(_))
    ));
    drop(lock);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Threads racing on one folder: exactly one draws, the others reproduce its release.
#[test]
fn concurrent_callers_draw_once() {
    let dir = fresh("race");
    let l = claim("demo");
    let draws = std::sync::atomic::AtomicU32::new(0);
    let values: Vec<u64> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..6)
            .map(|_| {
                s.spawn(|| {
                    let lock = DirLock::acquire_with(&dir, |_, _| {}).unwrap();
                    let (r, _) = guarded(&lock, "fp", &l, || -> Result<Rel, std::io::Error> {
                        let k = draws.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        Ok(Rel {
                            value: f64::from(k) + 0.5,
                            ledger: l.clone(),
                        })
                    })
                    .unwrap();
                    r.value.to_bits()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(draws.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(values.iter().all(|v| *v == values[0]));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The error crosses threads and converts into `Box<dyn Error + Send + Sync>` (and so into
/// `anyhow::Error`), with its cause chain intact.
#[test]
fn errors_are_send_sync_and_chain_their_causes() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<Error>();
    let dir = fresh("chain");
    let lock = DirLock::acquire(&dir).unwrap();
    let e = dpinfer_ledger::read_input(&dir.join("absent"), "config", None).unwrap_err();
    let boxed: Box<dyn core::error::Error + Send + Sync> = e.into();
    assert!(
        boxed.to_string().starts_with("cannot read config"),
        "{boxed}"
    );
    let cause = boxed.source().expect("the I/O error");
    assert!(cause.downcast_ref::<std::io::Error>().is_some());
    drop(lock);
    let _ = std::fs::remove_dir_all(&dir);
}
