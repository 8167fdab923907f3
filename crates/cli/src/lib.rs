#![doc = include_str!("../README.md")]
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::std_instead_of_core,
    clippy::std_instead_of_alloc
)]

pub mod files;

pub mod account;
pub mod jobs;
pub mod results;

pub use dpinfer_pipeline::errln;

#[cfg(test)]
mod tests {
    use dpinfer_pipeline::error::Context as _;

    /// `main` prints `format!("{e:#}")` of an `anyhow::Error` made from the pipeline's typed
    /// error: that is the pipeline error's own `{:#}`, context layers and causes included.
    #[test]
    fn anyhow_prints_the_pipeline_chain_unchanged() {
        let dir = std::env::temp_dir().join(format!("dpinfer-cli-chain-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.toml");
        std::fs::write(
            &path,
            "[model]\nname = \"gaussian-mean\"\n[sampler]\nkind = \"rejection\"\npairs = 10\n\
             [privacy]\ndelta = 2.0\n",
        )
        .unwrap();
        let e = dpinfer_pipeline::Config::load(&path).unwrap_err();
        let ours = format!("{e:#}");
        assert_eq!(
            ours,
            format!(
                "invalid config {}: privacy.delta must be in [0, 1), got 2.0",
                path.display()
            )
        );
        assert_eq!(format!("{:#}", anyhow::Error::from(e)), ours);
        // A library error with its own cause, under two context layers.
        let io = dpinfer_ledger::Error::Io {
            action: "creating /r".into(),
            source: std::io::Error::other("disk full"),
        };
        let e = Err::<(), _>(io)
            .context("writing the results")
            .context("run 3")
            .unwrap_err();
        let ours = format!("{e:#}");
        assert_eq!(ours, "run 3: writing the results: creating /r: disk full");
        assert_eq!(format!("{:#}", anyhow::Error::from(e)), ours);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
