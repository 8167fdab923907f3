//! Shard files: the public simulation step split into independent pieces.
//!
//! A shard holds rows `row_start .. row_start + n_rows` of the table of (θ, simulated output)
//! pairs of one generation. Row `j` is always simulated from the stream derived from
//! (run seed, generation, j), so any split into shards gives the same rows, and merging the
//! shards gives a file byte-identical to the single-process run's.
//!
//! Format (little-endian): magic `DPISHRD2` (version 2; version 1 files are refused), then `config_hash u64`, `run_seed u64`,
//! `generation u32`, `shard u32`, `shards u32`, `total_rows u64`, `row_start u64`,
//! `n_rows u64`, `theta_dim u32`, `out_dim u32`, then `n_rows·(theta_dim+out_dim)` f64 values
//! row by row (θ first), then the CRC-32 of everything before it. Files are written to a
//! temporary name in the same folder and renamed into place, so a shard is either complete
//! or absent.

use anyhow::{Context, Result, bail};

use crate::files::Replace;
use std::fs;
use std::path::{Path, PathBuf};

/// Format version 2: the rows come from the library's pair streams
/// (`dpinfer::abc::pairs::pairs_domain`); version 1 files (the CLI's own stream domain, before
/// the pipeline moved into `dpinfer-abc`) hold other numbers and are refused.
const MAGIC: &[u8; 8] = b"DPISHRD2";
/// The magic of the retired format version 1.
const MAGIC_V1: &[u8; 8] = b"DPISHRD1";

/// FNV-1a (64-bit) of `bytes`, continuing from `prev` (or from the offset basis): the
/// fingerprints of pairs tables and populations.
#[must_use]
pub fn fnv1a(prev: Option<u64>, bytes: &[u8]) -> u64 {
    let mut h = prev.unwrap_or(0xcbf2_9ce4_8422_2325);
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}
const HEADER_LEN: usize = 8 + 8 + 8 + 4 + 4 + 4 + 8 + 8 + 8 + 4 + 4;

/// What a shard file says about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardHeader {
    /// Hash of the configuration's public simulation part (model, prior, sizes, seed).
    pub config_hash: u64,
    /// The run seed of the public simulation randomness.
    pub run_seed: u64,
    /// SMC generation (0 for single-generation samplers).
    pub generation: u32,
    /// Shard index (0 for a merged file).
    pub shard: u32,
    /// Number of shards (1 for a merged file).
    pub shards: u32,
    /// Rows in the whole table.
    pub total_rows: u64,
    /// First row held.
    pub row_start: u64,
    /// Rows held.
    pub n_rows: u64,
    /// Parameter dimension.
    pub theta_dim: u32,
    /// Output (pseudo-data or summary) length per row.
    pub out_dim: u32,
}

impl ShardHeader {
    /// Values per row.
    #[must_use]
    pub fn row_len(&self) -> usize {
        self.theta_dim as usize + self.out_dim as usize
    }
}

/// The rows shard `i` of `n` holds out of `total`: `[i·total/n, (i+1)·total/n)`.
#[must_use]
pub fn shard_range(total: u64, i: u32, n: u32) -> (u64, u64) {
    let t = u128::from(total);
    let start = t * u128::from(i) / u128::from(n);
    let end = t * (u128::from(i) + 1) / u128::from(n);
    #[allow(clippy::cast_possible_truncation)]
    (start as u64, end as u64)
}

/// The file name of shard `i` of generation `g`.
#[must_use]
pub fn shard_file_name(generation: u32, i: u32, n: u32) -> String {
    format!("gen{generation:03}-shard{i:05}-of{n:05}.dpshard")
}

fn encode(h: &ShardHeader, data: &[f64]) -> Result<Vec<u8>> {
    let len = data
        .len()
        .checked_mul(8)
        .and_then(|n| n.checked_add(HEADER_LEN + 4))
        .context("size overflow")?;
    let mut b = Vec::new();
    b.try_reserve_exact(len)
        .map_err(|_| anyhow::anyhow!("not enough memory for a shard of {len} bytes"))?;
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&h.config_hash.to_le_bytes());
    b.extend_from_slice(&h.run_seed.to_le_bytes());
    b.extend_from_slice(&h.generation.to_le_bytes());
    b.extend_from_slice(&h.shard.to_le_bytes());
    b.extend_from_slice(&h.shards.to_le_bytes());
    b.extend_from_slice(&h.total_rows.to_le_bytes());
    b.extend_from_slice(&h.row_start.to_le_bytes());
    b.extend_from_slice(&h.n_rows.to_le_bytes());
    b.extend_from_slice(&h.theta_dim.to_le_bytes());
    b.extend_from_slice(&h.out_dim.to_le_bytes());
    for v in data {
        b.extend_from_slice(&v.to_le_bytes());
    }
    let crc = crc32fast::hash(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    Ok(b)
}

/// Writes a shard atomically and durably ([`crate::files::write_atomic`]).
///
/// # Errors
/// I/O failures, a refused target, or `data` not matching the header's size.
pub fn write_atomic(path: &Path, h: &ShardHeader, data: &[f64], replace: Replace) -> Result<()> {
    let expect = usize::try_from(h.n_rows)?
        .checked_mul(h.row_len())
        .context("size overflow")?;
    if data.len() != expect {
        bail!(
            "internal: shard data has {} values, header says {expect}",
            data.len()
        );
    }
    let bytes = encode(h, data)?;
    crate::files::write_atomic(path, &bytes, replace)
}

fn rd_u32(b: &[u8], o: &mut usize) -> u32 {
    let v = u32::from_le_bytes([b[*o], b[*o + 1], b[*o + 2], b[*o + 3]]);
    *o += 4;
    v
}
fn rd_u64(b: &[u8], o: &mut usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[*o..*o + 8]);
    *o += 8;
    u64::from_le_bytes(a)
}

/// Reads and checks a shard file (magic, sizes, CRC).
///
/// # Errors
/// Unreadable, truncated or corrupt files.
pub fn read(path: &Path) -> Result<(ShardHeader, Vec<f64>)> {
    let b = crate::files::read_input(path, "shard", None)?;
    decode(&b).with_context(|| format!("shard {}", path.display()))
}

fn decode(b: &[u8]) -> Result<(ShardHeader, Vec<f64>)> {
    if b.len() >= 8 && &b[..8] == MAGIC_V1 {
        bail!(
            "a shard of format version 1 (written before the pairs streams moved into the \
             library; its rows differ from this version's): simulate it again"
        );
    }
    if b.len() < HEADER_LEN + 4 || &b[..8] != MAGIC {
        bail!("not a dpinfer shard (bad magic or truncated)");
    }
    let (body, crc) = b.split_at(b.len() - 4);
    let crc = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
    if crc32fast::hash(body) != crc {
        bail!("checksum mismatch (corrupt)");
    }
    let mut o = 8;
    let h = ShardHeader {
        config_hash: rd_u64(b, &mut o),
        run_seed: rd_u64(b, &mut o),
        generation: rd_u32(b, &mut o),
        shard: rd_u32(b, &mut o),
        shards: rd_u32(b, &mut o),
        total_rows: rd_u64(b, &mut o),
        row_start: rd_u64(b, &mut o),
        n_rows: rd_u64(b, &mut o),
        theta_dim: rd_u32(b, &mut o),
        out_dim: rd_u32(b, &mut o),
    };
    let n = usize::try_from(h.n_rows)?
        .checked_mul(h.row_len())
        .context("size overflow")?;
    if n.checked_mul(8).and_then(|k| k.checked_add(HEADER_LEN)) != Some(body.len()) {
        bail!("size does not match header");
    }
    let data = body[HEADER_LEN..]
        .chunks_exact(8)
        .map(|c| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            f64::from_le_bytes(a)
        })
        .collect();
    Ok((h, data))
}

/// The outcome of checking a shard folder.
#[derive(Debug, Default)]
pub struct VerifyReport {
    /// Shards present and sound.
    pub ok: Vec<u32>,
    /// Shard indices with no file.
    pub missing: Vec<u32>,
    /// Files that exist but fail to parse, fail the checksum or disagree with the others.
    pub corrupt: Vec<(PathBuf, String)>,
    /// The common header (from the first readable shard; `shards` from the file names).
    pub header: Option<ShardHeader>,
    /// No shard could be read: `header` carries only the split from the names.
    pub unreadable: bool,
}

impl VerifyReport {
    /// True when every shard is present and sound.
    #[must_use]
    pub fn complete(&self) -> bool {
        self.missing.is_empty() && self.corrupt.is_empty() && !self.unreadable
    }
}

/// Most shards one split may have (`simulate` and `verify` refuse more).
pub const MAX_SHARDS: u32 = 1 << 20;

/// `(i, n)` of a canonical shard file name of generation `generation`.
fn parse_name(name: &str, generation: u32) -> Option<(u32, u32)> {
    let rest = name
        .strip_prefix(&format!("gen{generation:03}-shard"))?
        .strip_suffix(".dpshard")?;
    let (i, n) = rest.split_once("-of")?;
    let (i, n) = (i.parse().ok()?, n.parse().ok()?);
    (shard_file_name(generation, i, n) == name).then_some((i, n))
}

/// The first non-finite value of a table, as (row, column).
#[must_use]
pub fn first_non_finite(data: &[f64], row_len: usize) -> Option<(usize, usize)> {
    let k = data.iter().position(|v| !v.is_finite())?;
    Some((k / row_len.max(1), k % row_len.max(1)))
}

/// Checks the shards of generation `generation` in `dir`. The split (how many shards) comes
/// from the file names, which must all agree; each header must then agree with its own name
/// (generation, index, count), with the other shards (config, seed, sizes), and with its row
/// range, and hold only finite values. A forged header cannot make this allocate or loop
/// beyond [`MAX_SHARDS`].
///
/// # Errors
/// The folder cannot be listed, holds no shard of that generation, or holds several splits.
pub fn verify_dir(dir: &Path, generation: u32) -> Result<VerifyReport> {
    let prefix = format!("gen{generation:03}-shard");
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|s| s.to_str())
                .is_some_and(|s| s.starts_with(&prefix) && s.ends_with(".dpshard"))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no shards of generation {generation} in {}", dir.display());
    }
    let mut rep = VerifyReport::default();
    let mut named = Vec::new();
    for f in files {
        match f
            .file_name()
            .and_then(|s| s.to_str())
            .and_then(|s| parse_name(s, generation))
        {
            Some((i, n)) => named.push((f, i, n)),
            None => rep
                .corrupt
                .push((f, "not a canonical gGGG-shardIIIII-ofNNNNN name".into())),
        }
    }
    let splits: std::collections::BTreeSet<u32> = named.iter().map(|x| x.2).collect();
    if splits.len() > 1 {
        bail!(
            "{} mixes shards of different splits (of {:?}); keep one split per folder",
            dir.display(),
            splits
        );
    }
    let Some(&n) = splits.first() else {
        bail!(
            "no shard of generation {generation} in {} has a valid name",
            dir.display()
        );
    };
    if n == 0 || n > MAX_SHARDS {
        bail!(
            "shard names in {} claim {n} shards (1..={MAX_SHARDS} allowed)",
            dir.display()
        );
    }
    let mut seen = std::collections::BTreeSet::new();
    for (f, i, _) in named {
        match read(&f) {
            Ok((h, data)) => {
                let expect = *rep.header.get_or_insert(h);
                let (s, e) = shard_range(h.total_rows, i, n);
                let why = if h.generation != generation || h.shard != i || h.shards != n {
                    Some(format!(
                        "header says generation {} shard {} of {}, its name generation \
                         {generation} shard {i} of {n}",
                        h.generation, h.shard, h.shards
                    ))
                } else if h.config_hash != expect.config_hash
                    || h.run_seed != expect.run_seed
                    || h.total_rows != expect.total_rows
                    || h.theta_dim != expect.theta_dim
                    || h.out_dim != expect.out_dim
                {
                    Some("header disagrees with the other shards".into())
                } else if h.total_rows < u64::from(n) || h.row_start != s || h.n_rows != e - s {
                    Some(format!("row range does not match shard {i} of {n}"))
                } else {
                    first_non_finite(&data, h.row_len())
                        .map(|(r, c)| format!("non-finite value in row {r}, column {c}"))
                };
                match why {
                    None => {
                        seen.insert(i);
                        rep.ok.push(i);
                    }
                    Some(w) => rep.corrupt.push((f, w)),
                }
            }
            Err(e) => rep.corrupt.push((f, e.root_cause().to_string())),
        }
    }
    if let Some(h) = &mut rep.header {
        h.shards = n;
    } else {
        rep.header = Some(ShardHeader {
            config_hash: 0,
            run_seed: 0,
            generation,
            shard: 0,
            shards: n,
            total_rows: 0,
            row_start: 0,
            n_rows: 0,
            theta_dim: 0,
            out_dim: 0,
        });
        rep.unreadable = true;
    }
    rep.missing = (0..n).filter(|i| !seen.contains(i)).collect();
    Ok(rep)
}

/// Merges a complete shard folder into one table with the header of a single-process run.
///
/// # Errors
/// Missing or corrupt shards.
pub fn merge_dir(dir: &Path, generation: u32) -> Result<(ShardHeader, Vec<f64>)> {
    let rep = verify_dir(dir, generation)?;
    if !rep.complete() {
        bail!(
            "cannot merge: {} missing and {} corrupt shard(s); run `dpinfer verify {}`",
            rep.missing.len(),
            rep.corrupt.len(),
            dir.display()
        );
    }
    let Some(h0) = rep.header else {
        bail!("no shards")
    };
    let mut data = Vec::new();
    let len = usize::try_from(h0.total_rows)
        .ok()
        .and_then(|t| t.checked_mul(h0.row_len()))
        .context("merged table size overflows")?;
    data.try_reserve_exact(len)
        .map_err(|_| anyhow::anyhow!("not enough memory for the merged table ({len} values)"))?;
    for i in 0..h0.shards {
        let (_, d) = read(&dir.join(shard_file_name(generation, i, h0.shards)))?;
        data.extend_from_slice(&d);
    }
    let h = ShardHeader {
        shard: 0,
        shards: 1,
        row_start: 0,
        n_rows: h0.total_rows,
        ..h0
    };
    Ok((h, data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_corruption() {
        let dir = std::env::temp_dir().join(format!("dpinfer-shard-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let h = ShardHeader {
            config_hash: 7,
            run_seed: 1,
            generation: 0,
            shard: 0,
            shards: 1,
            total_rows: 2,
            row_start: 0,
            n_rows: 2,
            theta_dim: 1,
            out_dim: 2,
        };
        let p = dir.join(shard_file_name(0, 0, 1));
        write_atomic(&p, &h, &[1.0, 2.0, 3.0, 4.0, 5.0, f64::NAN], Replace::Owned).unwrap();
        let (h2, d) = read(&p).unwrap();
        assert_eq!(h, h2);
        assert_eq!(d[..5], [1.0, 2.0, 3.0, 4.0, 5.0]);
        assert!(d[5].is_nan());
        // A non-finite value reads back, but verify reports the shard.
        let rep = verify_dir(&dir, 0).unwrap();
        assert!(!rep.complete() && rep.corrupt[0].1.contains("non-finite"));
        // (A file this process read is an input it never overwrites: a fresh folder.)
        let dir2 = dir.join("finite");
        let p = dir2.join(shard_file_name(0, 0, 1));
        write_atomic(&p, &h, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], Replace::Owned).unwrap();
        assert!(verify_dir(&dir2, 0).unwrap().complete());
        let mut b = fs::read(&p).unwrap();
        b[HEADER_LEN + 3] ^= 1;
        fs::write(&p, &b).unwrap();
        let rep = verify_dir(&dir, 0).unwrap();
        assert!(!rep.complete() && rep.corrupt.len() == 1);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn ranges_partition_rows() {
        for total in [0u64, 1, 7, 1000] {
            for n in [1u32, 3, 64] {
                let mut next = 0;
                for i in 0..n {
                    let (s, e) = shard_range(total, i, n);
                    assert_eq!(s, next);
                    next = e;
                }
                assert_eq!(next, total);
            }
        }
    }
}
