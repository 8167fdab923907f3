//! The once-only protocol from outside the crate: every refusal of `guarded` and `once_start`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::std_instead_of_core,
    clippy::panic,
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

/// Environment variable that makes a test binary run the child side of a key test: the key
/// comes from the process environment, so each key source gets its own process.
const CHILD_DIR: &str = "DPINFER_ONCE_TEST_CHILD_DIR";
/// `ok` or `refused`: what the child expects.
const CHILD_EXPECT: &str = "DPINFER_ONCE_TEST_EXPECT";

/// The child side: under the key in its environment, a refused key leaves the folder without
/// a ledger or release and the release closure uncalled (`guarded` and `once_start` alike);
/// a good key releases.
fn key_child(dir: &Path) {
    let lock = DirLock::acquire_with(dir, |_, _| {}).unwrap();
    let l = claim("keyed");
    let calls = Cell::new(0);
    let r = run(&lock, "fp", &l, &calls);
    if std::env::var(CHILD_EXPECT).as_deref() == Ok("ok") {
        let (_, reproduced) = r.unwrap();
        assert!(!reproduced);
        assert_eq!(calls.get(), 1);
        let ledger = std::fs::read_to_string(dir.join(LEDGER_FILE)).unwrap();
        assert!(
            ledger.contains("\"released\"") && ledger.contains("release_mac"),
            "{ledger}"
        );
        return;
    }
    let key_error = |e: &Error| matches!(e, Error::KeyFile { .. } | Error::KeyTooShort(_));
    let e = r.unwrap_err();
    assert!(key_error(&e), "{e:?}");
    assert_eq!(calls.get(), 0, "noise drawn under a bad key");
    let e = once_start(&lock, "fp", "MCMC").unwrap_err();
    assert!(key_error(&e), "{e:?}");
    assert!(
        !dir.join(LEDGER_FILE).exists(),
        "a started mark under a bad key"
    );
    assert!(!dir.join(RELEASE_FILE).exists());
}

/// Runs this test binary's `test` as a key child in `dir` with `env`, failing on a child
/// failure or a child that does not finish within 60 s (a FIFO key file used to hang).
#[cfg(unix)]
fn child(test: &str, dir: &Path, env: &[(&str, &std::ffi::OsStr)], expect: &str) {
    let mut c = std::process::Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env_remove(dpinfer_ledger::mac::KEY_ENV)
        .env_remove(dpinfer_ledger::mac::KEY_FILE_ENV)
        .env(CHILD_DIR, dir)
        .env(CHILD_EXPECT, expect)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut p = c.spawn().unwrap();
    let t0 = std::time::Instant::now();
    while p.try_wait().unwrap().is_none() {
        if t0.elapsed().as_secs() > 60 {
            let _ = p.kill();
            panic!("key child {env:?} hangs");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let o = p.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "key child {env:?} ({expect}): {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Issue 26 (2): every unusable key source stops a release before its `started` mark and
/// before the closure that draws the noise — an empty or short variable, an empty, short,
/// missing, oversized or unreadable file, a folder, a device, a FIFO (which used to hang
/// after the release was written) and a link to one — and a rerun with a good key releases.
#[cfg(unix)]
#[test]
fn a_bad_ledger_key_stops_a_release_before_anything_is_marked_or_drawn() {
    const TEST: &str = "a_bad_ledger_key_stops_a_release_before_anything_is_marked_or_drawn";
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        return key_child(Path::new(&dir));
    }
    use dpinfer_ledger::mac::{KEY_ENV, KEY_FILE_ENV, MAX_KEY_FILE_BYTES};
    use std::ffi::{OsStr, OsString};
    let dir = fresh("key");
    std::fs::create_dir_all(&dir).unwrap();
    let good = "correct horse battery staple";
    let file = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.into_os_string()
    };
    let fifo = dir.join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let fifo_link = dir.join("fifo-link");
    std::os::unix::fs::symlink(&fifo, &fifo_link).unwrap();
    std::fs::create_dir(dir.join("folder")).unwrap();
    let cap = usize::try_from(MAX_KEY_FILE_BYTES).unwrap();
    let mut big = good.repeat(1 + cap / good.len()).into_bytes();
    big.truncate(cap + 1);
    let mut cases: Vec<(&str, OsString)> = vec![
        (KEY_ENV, "".into()),
        (KEY_ENV, "fifteen bytes!!".into()),
        (KEY_FILE_ENV, "".into()),
        (KEY_FILE_ENV, dir.join("missing").into_os_string()),
        (KEY_FILE_ENV, dir.join("folder").into_os_string()),
        (KEY_FILE_ENV, "/dev/null".into()),
        (KEY_FILE_ENV, fifo.clone().into_os_string()),
        (KEY_FILE_ENV, fifo_link.into_os_string()),
        (KEY_FILE_ENV, file("empty", b"")),
        (KEY_FILE_ENV, file("short", b"fifteen bytes!!")),
        (KEY_FILE_ENV, file("big", &big)),
    ];
    // Unreadable: only where permissions bind (not as root).
    let locked = file("locked", good.as_bytes());
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    }
    if std::fs::read(&locked).is_err() {
        cases.push((KEY_FILE_ENV, locked));
    }
    for (i, (var, value)) in cases.iter().enumerate() {
        child(
            TEST,
            &dir.join(format!("out{i}")),
            &[(var, value.as_os_str())],
            "refused",
        );
    }
    // The same folders, the key fixed: released (nothing was marked, so nothing refuses).
    let good_file = file("good", good.as_bytes());
    child(
        TEST,
        &dir.join("out0"),
        &[(KEY_ENV, OsStr::new(good))],
        "ok",
    );
    child(TEST, &dir.join("out6"), &[(KEY_FILE_ENV, &good_file)], "ok");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `mkfifo path`.
#[cfg(unix)]
fn mkfifo(path: &Path) {
    assert!(
        std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap()
            .success()
    );
}

/// Issue 26 (3): a link, FIFO or device planted at `.dpinfer.lock` is refused and its target
/// untouched (the lock used to follow the link, truncate the target and write a PID into
/// it); an existing regular file the lock did not create is locked but never truncated; a
/// lock file of an earlier run gets the new PID.
#[cfg(unix)]
#[test]
fn the_lock_file_never_follows_links_or_truncates_a_foreign_file() {
    use std::os::unix::fs::symlink;
    let dir = fresh("lockfile");
    std::fs::create_dir_all(&dir).unwrap();
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    let lock = out.join(".dpinfer.lock");
    let refused = |what: &str| {
        let e = DirLock::acquire_with(&out, |_, _| {}).unwrap_err();
        assert!(matches!(e, Error::NotRegular(_)), "{what}: {e:?}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious", "{what}");
    };
    symlink(&victim, &lock).unwrap();
    refused("a link to a file");
    std::fs::remove_file(&lock).unwrap();
    symlink(dir.join("absent"), &lock).unwrap();
    refused("a dangling link");
    assert!(
        !dir.join("absent").exists(),
        "created through a dangling link"
    );
    std::fs::remove_file(&lock).unwrap();
    symlink("/dev/null", &lock).unwrap();
    refused("a link to a device");
    std::fs::remove_file(&lock).unwrap();
    mkfifo(&lock);
    refused("a FIFO");
    std::fs::remove_file(&lock).unwrap();
    std::fs::create_dir(&lock).unwrap();
    refused("a folder");
    std::fs::remove_dir(&lock).unwrap();
    // A hard link to the victim (a regular file with another name): locked, left unchanged.
    std::fs::hard_link(&victim, &lock).unwrap();
    drop(DirLock::acquire_with(&out, |_, _| {}).unwrap());
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    std::fs::remove_file(&lock).unwrap();
    // A foreign regular file: locked, left unchanged.
    std::fs::write(&lock, "not a pid").unwrap();
    drop(DirLock::acquire_with(&out, |_, _| {}).unwrap());
    assert_eq!(std::fs::read(&lock).unwrap(), b"not a pid");
    std::fs::remove_file(&lock).unwrap();
    // A new lock file holds this process's PID; an earlier run's PID is replaced.
    let pid = std::process::id().to_string();
    drop(DirLock::acquire_with(&out, |_, _| {}).unwrap());
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), pid);
    std::fs::write(&lock, "4194303").unwrap();
    drop(DirLock::acquire_with(&out, |_, _| {}).unwrap());
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), pid);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 26 (3): a link, FIFO or device planted at the ledger's or the release's name never
/// hangs the ledger, is never followed, and (for the release) is refused before the
/// `started` mark, so nothing is drawn; the target stays unchanged.
#[cfg(unix)]
#[test]
fn planted_links_fifos_and_devices_at_the_ledger_files_are_refused_before_any_draw() {
    use std::os::unix::fs::symlink;
    let dir = fresh("planted");
    std::fs::create_dir_all(&dir).unwrap();
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let l = claim("planted");
    for name in [LEDGER_FILE, RELEASE_FILE] {
        for (k, plant) in ["link", "fifo", "device", "dangling"].iter().enumerate() {
            let out = dir.join(format!("{name}-{k}"));
            std::fs::create_dir(&out).unwrap();
            let p = out.join(name);
            match *plant {
                "link" => symlink(&victim, &p).unwrap(),
                "fifo" => mkfifo(&p),
                "device" => symlink("/dev/null", &p).unwrap(),
                _ => symlink(dir.join("absent"), &p).unwrap(),
            }
            let lock = DirLock::acquire_with(&out, |_, _| {}).unwrap();
            let calls = Cell::new(0);
            let e = run(&lock, "fp", &l, &calls).unwrap_err();
            assert!(
                matches!(e, Error::NotRegular(_) | Error::NotRegularInput { .. }),
                "{name} {plant}: {e:?}"
            );
            assert_eq!(calls.get(), 0, "{name} {plant}: drawn");
            if name == RELEASE_FILE {
                assert!(!out.join(LEDGER_FILE).exists(), "{name} {plant}: marked");
            }
            let e = once_start(&lock, "fp", "MCMC");
            if name == LEDGER_FILE {
                assert!(e.is_err(), "{name} {plant}: once_start");
            }
            assert!(
                std::fs::symlink_metadata(&p).is_ok(),
                "{name} {plant} removed"
            );
            assert_eq!(
                std::fs::read(&victim).unwrap(),
                b"precious",
                "{name} {plant}"
            );
            assert!(!dir.join("absent").exists());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
