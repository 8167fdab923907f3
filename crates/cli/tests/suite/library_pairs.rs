//! The CLI's public step is the library's: `dpinfer simulate` writes, for the same seed, the
//! pairs table `dpinfer_abc::pairs::PublicPairs` computes (one stream domain), whatever the
//! sharding and the thread count.

use crate::common;

use common::{dpinfer, fresh_dir, show, simulate};
use dpinfer::abc::pairs::PublicPairs;
use dpinfer::simulators::models::gaussian::GaussianMean;

/// The model both configs share (and the library builds as `GaussianMean::new(12, 1.5, 0.5, 3.0)`).
const MODEL: &str = r#"
[model]
name = "gaussian-mean"
n = 12
sigma = 1.5
prior_mean = 0.5
prior_sd = 3.0

[distance]
kind = "l2"
clip = 100.0
"#;

const CONFIG: &str = r#"
[sampler]
kind = "rejection"
pairs = 5000

[seeds]
run = 424242
"#;

/// Reads a shard file's values (checksum verified).
fn shard_values(path: &std::path::Path) -> Vec<f64> {
    assert_eq!(&std::fs::read(path).unwrap()[..8], b"DPISHRD2");
    dpinfer_ledger::shard::read(path).unwrap().1
}

#[test]
fn cli_and_library_make_the_same_pair_table_for_the_same_seed() {
    let dir = fresh_dir("library-pairs");
    let cfg = dir.join("c.toml");
    std::fs::write(&cfg, format!("{MODEL}{CONFIG}")).unwrap();
    let c = cfg.to_str().unwrap();
    let model = GaussianMean::new(12, 1.5, 0.5, 3.0).unwrap();
    let lib = PublicPairs::generate(&model.prior(), &model, 5000, 424_242).unwrap();
    let table = lib.to_table();
    assert_eq!(table.len(), 5000 * 13);
    for (threads, shards) in [("1", 1u32), ("2", 3), ("7", 2)] {
        let out = dir.join(format!("s{threads}"));
        let mut got = Vec::new();
        for i in 0..shards {
            let o = simulate(&dir, c, (i, shards), &out, &["--threads", threads]);
            assert!(o.status.success(), "{}", show(&o));
            let name = format!("gen000-shard{i:05}-of{shards:05}.dpshard");
            got.extend(shard_values(&out.join(name)));
        }
        assert!(
            got.iter()
                .zip(&table)
                .all(|(a, b)| a.to_bits() == b.to_bits())
                && got.len() == table.len(),
            "{threads} threads, {shards} shards: the CLI table differs from the library's"
        );
    }
    // A shard is the library's row range.
    let part = PublicPairs::generate_range(&model.prior(), &model, 424_242, 1666..3333).unwrap();
    assert_eq!(part.to_table(), table[1666 * 13..3333 * 13].to_vec());
}

const SMC: &str = r#"
[sampler]
kind = "smc-abc"
pairs = 3000
particles = 150
generations = 2

[seeds]
run = 99

[output]
dir = "r"
"#;

#[test]
fn cli_and_library_make_the_same_pmc_generation_from_a_population() {
    use dpinfer::abc::pairs::Proposal;
    use dpinfer::abc::pmc::{PmcKernel, Population};
    use dpinfer::simulators::Rowless;
    let dir = fresh_dir("library-pmc");
    let cfg = dir.join("c.toml");
    std::fs::write(&cfg, format!("{MODEL}{SMC}")).unwrap();
    let c = cfg.to_str().unwrap();
    let o = dpinfer(&["run", c], &dir);
    assert!(o.status.success(), "{}", show(&o));
    let pop_path = dir.join("r/population-gen000.json");
    let o = simulate(
        &dir,
        c,
        (1, 2),
        "s",
        &[
            "--generation",
            "1",
            "--population",
            pop_path.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", show(&o));
    let got = shard_values(&dir.join("s/gen001-shard00001-of00002.dpshard"));
    // The library, from the population file's values alone.
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&pop_path).unwrap()).unwrap();
    let floats = |k: &str| -> Vec<f64> {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let pop = Population {
        generation: 0,
        tolerance: v["tolerance"].as_f64().unwrap(),
        dim: 1,
        particles: floats("particles"),
        weights: floats("weights"),
        ess: v["ess"].as_f64().unwrap(),
        proposals: 3000,
    };
    let kernel = PmcKernel::new(&pop).unwrap();
    let model = GaussianMean::new(12, 1.5, 0.5, 3.0).unwrap();
    let prior = model.prior();
    let lib = PublicPairs::simulate(
        &Proposal::Kernel {
            prior: &prior,
            kernel: &kernel,
        },
        &Rowless(&model),
        99,
        1500..3000,
    )
    .unwrap();
    assert!(
        got.iter()
            .zip(lib.to_table())
            .all(|(a, b)| a.to_bits() == b.to_bits())
            && got.len() == 1500 * 13,
        "the CLI's generation-1 shard differs from the library's"
    );
}
