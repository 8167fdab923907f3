//! Shard files: the public simulation step split into independent pieces.
//!
//! A shard holds rows `row_start .. row_start + n_rows` of the table of (θ, simulated output)
//! pairs of one generation. Row `j` is always simulated from the stream derived from
//! (run seed, generation, j) (`dpinfer_abc::pairs::PublicPairs::simulate`), so any split into
//! shards gives the same rows, and merging the shards gives a file byte-identical to the
//! single-process run's.
//!
//! Format (little-endian): magic `DPISHRD2` (version 2; version 1 files are refused), then
//! `config_hash u64`, `run_seed u64`, `generation u32`, `shard u32`, `shards u32`,
//! `total_rows u64`, `row_start u64`, `n_rows u64`, `theta_dim u32`, `out_dim u32`, then
//! `n_rows·(theta_dim+out_dim)` f64 values row by row (θ first), then the CRC-32 of everything
//! before it. Files are written through [`write_atomic`](crate::write_atomic), so a shard is
//! either complete or absent. [`encode`] and [`decode`] are the in-memory halves; both move
//! the values in one bulk pass (no per-value allocation or write).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result, ShardFault};
use crate::files::Replace;

/// Format version 2: the rows come from the library's pair streams
/// (`dpinfer_abc::pairs::pairs_domain`); version 1 files (the CLI's own stream domain, before
/// the pipeline moved into `dpinfer-abc`) hold other numbers and are refused.
pub const MAGIC: &[u8; 8] = b"DPISHRD2";
/// The magic of the retired format version 1.
const MAGIC_V1: &[u8; 8] = b"DPISHRD1";

/// Bytes before the first value.
pub const HEADER_LEN: usize = 8 + 8 + 8 + 4 + 4 + 4 + 8 + 8 + 8 + 4 + 4;

/// Most shards one split may have (`verify_dir` refuses more).
pub const MAX_SHARDS: u32 = 1 << 20;

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

    /// Values the header implies: `n_rows · row_len`.
    ///
    /// # Errors
    /// [`ShardFault::SizeOverflow`] when that does not fit in memory.
    pub fn values(&self) -> Result<usize> {
        usize::try_from(self.n_rows)
            .ok()
            .and_then(|n| n.checked_mul(self.row_len()))
            .ok_or(Error::Shard {
                path: None,
                fault: ShardFault::SizeOverflow,
            })
    }
}

/// The rows shard `i` of `n` holds out of `total`: `[i·total/n, (i+1)·total/n)`; the
/// ranges of `i = 0..n` partition `0..total`. `n = 0` is read as one shard.
#[must_use]
pub fn shard_range(total: u64, i: u32, n: u32) -> (u64, u64) {
    let t = u128::from(total);
    let n = u128::from(n.max(1));
    let i = u128::from(i).min(n);
    let start = t * i / n;
    let end = t * (i + 1).min(n) / n;
    // Both are ≤ total, a u64.
    let cut = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
    (cut(start), cut(end))
}

/// The file name of shard `i` of `n` of generation `generation`.
#[must_use]
pub fn shard_file_name(generation: u32, i: u32, n: u32) -> String {
    format!("gen{generation:03}-shard{i:05}-of{n:05}.dpshard")
}

fn fault(fault: ShardFault) -> Error {
    Error::Shard { path: None, fault }
}

/// Values converted per block by [`write_into`] (a 1 MiB buffer).
const BLOCK: usize = 1 << 17;

/// The header's bytes (magic and fields, little-endian).
fn header_bytes(h: &ShardHeader) -> [u8; HEADER_LEN] {
    let mut b = [0u8; HEADER_LEN];
    let fields: [&[u8]; 11] = [
        MAGIC,
        &h.config_hash.to_le_bytes(),
        &h.run_seed.to_le_bytes(),
        &h.generation.to_le_bytes(),
        &h.shard.to_le_bytes(),
        &h.shards.to_le_bytes(),
        &h.total_rows.to_le_bytes(),
        &h.row_start.to_le_bytes(),
        &h.n_rows.to_le_bytes(),
        &h.theta_dim.to_le_bytes(),
        &h.out_dim.to_le_bytes(),
    ];
    let mut o = 0;
    for f in fields {
        b[o..o + f.len()].copy_from_slice(f);
        o += f.len();
    }
    b
}

/// Checks that `data` holds the header's `n_rows · row_len` values.
fn check_len(h: &ShardHeader, data: &[f64]) -> Result<()> {
    let expect = h.values()?;
    if data.len() == expect {
        Ok(())
    } else {
        Err(fault(ShardFault::DataLength {
            got: data.len(),
            expect,
        }))
    }
}

/// Streams a shard (header, values, CRC-32; see the module docs) into `w`: the values are
/// converted a 1 MiB block at a time and the CRC is computed on the way, so writing a table
/// of any size needs no second copy of it in memory and makes one `write_all` per block.
///
/// # Errors
/// `data` not matching the header's size (nothing written), or `w`'s I/O error.
pub fn write_into<W: std::io::Write>(w: &mut W, h: &ShardHeader, data: &[f64]) -> Result<()> {
    check_len(h, data)?;
    let io = |e| Error::io("streaming the shard", e);
    let mut crc = crc32fast::Hasher::new();
    let head = header_bytes(h);
    crc.update(&head);
    w.write_all(&head).map_err(io)?;
    let mut buf = vec![0u8; 8 * BLOCK.min(data.len())];
    for block in data.chunks(BLOCK) {
        let bytes = &mut buf[..8 * block.len()];
        for (dst, v) in bytes.chunks_exact_mut(8).zip(block) {
            dst.copy_from_slice(&v.to_le_bytes());
        }
        crc.update(bytes);
        w.write_all(bytes).map_err(io)?;
    }
    w.write_all(&crc.finalize().to_le_bytes()).map_err(io)
}

/// The bytes of a shard file: header, values, CRC-32 (see the module docs), in one buffer
/// sized up front ([`write_into`] a `Vec`).
///
/// # Errors
/// `data` not matching the header's size, a size that overflows, too little memory.
pub fn encode(h: &ShardHeader, data: &[f64]) -> Result<Vec<u8>> {
    check_len(h, data)?;
    let len = data
        .len()
        .checked_mul(8)
        .and_then(|n| n.checked_add(HEADER_LEN + 4))
        .ok_or_else(|| fault(ShardFault::SizeOverflow))?;
    let mut b = Vec::new();
    b.try_reserve_exact(len)
        .map_err(|_| Error::OutOfMemory(format!("for a shard of {len} bytes")))?;
    write_into(&mut b, h, data)?;
    Ok(b)
}

/// Writes a shard atomically and durably ([`crate::write_atomic`]): [`encode`], then one
/// `write_all` of the whole file. (Streaming [`write_into`] the temporary file instead saves
/// the in-memory copy but measured 13–50 % slower here, on ext4; see the README.)
///
/// # Errors
/// I/O failures, a refused target, or `data` not matching the header's size (checked before
/// anything is created).
pub fn write_atomic(path: &Path, h: &ShardHeader, data: &[f64], replace: Replace) -> Result<()> {
    let bytes = encode(h, data)?;
    crate::files::write_atomic(path, &bytes, replace)
}

fn u32_at(b: &[u8], o: &mut usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[*o..*o + 4]);
    *o += 4;
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], o: &mut usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[*o..*o + 8]);
    *o += 8;
    u64::from_le_bytes(a)
}

/// Reads and checks a shard file (magic, sizes, CRC); the file becomes an input of this
/// process ([`crate::read_input`]).
///
/// # Errors
/// Unreadable, truncated or corrupt files ([`Error::Shard`] names the path).
pub fn read(path: &Path) -> Result<(ShardHeader, Vec<f64>)> {
    decode_from(path, &crate::files::read_input(path, "shard", None)?)
}

/// [`read`] for a table the caller wrote itself into a folder it owns (a results folder's
/// `pairs-gen000.dpshard`): a regular file only, a link at the name refused, never blocking,
/// and not remembered as an input (the caller may rewrite it).
///
/// # Errors
/// As [`read`], and a link or special file at the name.
pub fn read_owned(path: &Path) -> Result<(ShardHeader, Vec<f64>)> {
    decode_from(path, &crate::files::read_owned(path, "shard", None)?)
}

/// [`decode`] of the bytes read from `path`; a shard fault names the path.
fn decode_from(path: &Path, b: &[u8]) -> Result<(ShardHeader, Vec<f64>)> {
    decode(b).map_err(|e| match e {
        Error::Shard { path: None, fault } => Error::Shard {
            path: Some(path.into()),
            fault,
        },
        e => e,
    })
}

/// Parses and checks the bytes of a shard file.
///
/// # Errors
/// A version-1 file, bad magic, a failed checksum, sizes that disagree.
#[inline]
pub fn decode(b: &[u8]) -> Result<(ShardHeader, Vec<f64>)> {
    if b.len() >= 8 && &b[..8] == MAGIC_V1 {
        return Err(fault(ShardFault::Version1));
    }
    if b.len() < HEADER_LEN + 4 || &b[..8] != MAGIC {
        return Err(fault(ShardFault::BadMagic));
    }
    let (body, crc) = b.split_at(b.len() - 4);
    let crc = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
    if crc32fast::hash(body) != crc {
        return Err(fault(ShardFault::Checksum));
    }
    let mut o = 8;
    let h = ShardHeader {
        config_hash: u64_at(b, &mut o),
        run_seed: u64_at(b, &mut o),
        generation: u32_at(b, &mut o),
        shard: u32_at(b, &mut o),
        shards: u32_at(b, &mut o),
        total_rows: u64_at(b, &mut o),
        row_start: u64_at(b, &mut o),
        n_rows: u64_at(b, &mut o),
        theta_dim: u32_at(b, &mut o),
        out_dim: u32_at(b, &mut o),
    };
    let n = h.values()?;
    if n.checked_mul(8).and_then(|k| k.checked_add(HEADER_LEN)) != Some(body.len()) {
        return Err(fault(ShardFault::SizeMismatch));
    }
    let mut data = Vec::new();
    data.try_reserve_exact(n)
        .map_err(|_| Error::OutOfMemory(format!("for a shard of {n} values")))?;
    data.extend(body[HEADER_LEN..].chunks_exact(8).map(|c| {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        f64::from_le_bytes(a)
    }));
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
        .map_err(|e| Error::io(format!("listing {}", dir.display()), e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|s| s.to_str())
                .is_some_and(|s| s.starts_with(&prefix) && s.ends_with(".dpshard"))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Error::NoShards {
            dir: dir.into(),
            generation,
            misnamed: false,
        });
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
    let splits: BTreeSet<u32> = named.iter().map(|x| x.2).collect();
    if splits.len() > 1 {
        return Err(Error::MixedSplits {
            dir: dir.into(),
            splits: splits.into_iter().collect(),
        });
    }
    let Some(&n) = splits.first() else {
        return Err(Error::NoShards {
            dir: dir.into(),
            generation,
            misnamed: true,
        });
    };
    if n == 0 || n > MAX_SHARDS {
        return Err(Error::ShardCount {
            dir: dir.into(),
            shards: n,
        });
    }
    let mut seen = BTreeSet::new();
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
            Err(e) => rep.corrupt.push((f, e.root_cause())),
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
/// Missing or corrupt shards ([`Error::Incomplete`]), too little memory, I/O.
pub fn merge_dir(dir: &Path, generation: u32) -> Result<(ShardHeader, Vec<f64>)> {
    let rep = verify_dir(dir, generation)?;
    let h0 = match rep.header {
        Some(h) if rep.complete() => h,
        _ => {
            return Err(Error::Incomplete {
                dir: dir.into(),
                missing: rep.missing.len(),
                corrupt: rep.corrupt.len(),
            });
        }
    };
    let len = usize::try_from(h0.total_rows)
        .ok()
        .and_then(|t| t.checked_mul(h0.row_len()))
        .ok_or_else(|| fault(ShardFault::SizeOverflow))?;
    let mut data = Vec::new();
    data.try_reserve_exact(len)
        .map_err(|_| Error::OutOfMemory(format!("for the merged table ({len} values)")))?;
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
    #![allow(clippy::unwrap_used, clippy::cast_precision_loss)]
    use super::*;

    fn header(n_rows: u64) -> ShardHeader {
        ShardHeader {
            config_hash: 7,
            run_seed: 1,
            generation: 0,
            shard: 0,
            shards: 1,
            total_rows: n_rows,
            row_start: 0,
            n_rows,
            theta_dim: 1,
            out_dim: 2,
        }
    }

    #[test]
    fn roundtrip_and_corruption() {
        let dir = std::env::temp_dir().join(format!("dpinfer-shard-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let h = header(2);
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
        // The streamed file is byte for byte the one-buffer encoding.
        assert_eq!(
            fs::read(&p).unwrap(),
            encode(&h, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap()
        );
        let mut b = fs::read(&p).unwrap();
        b[HEADER_LEN + 3] ^= 1;
        fs::write(&p, &b).unwrap();
        let rep = verify_dir(&dir2, 0).unwrap();
        assert!(!rep.complete() && rep.corrupt.len() == 1);
        assert_eq!(rep.corrupt[0].1, "checksum mismatch (corrupt)");
        // Both readers name the file in the fault.
        for got in [read(&p), read_owned(&p)] {
            assert!(matches!(
                got,
                Err(Error::Shard {
                    path: Some(ref q),
                    fault: ShardFault::Checksum
                }) if *q == p
            ));
        }
        let _ = fs::remove_dir_all(&dir);
    }

    /// The bulk encoder writes exactly the documented layout: header fields, then each
    /// value's little-endian bytes, then the CRC-32 of all of it.
    #[test]
    fn the_layout_is_the_documented_one() {
        let h = header(2);
        let data = [1.5, -0.0, f64::MAX, f64::MIN_POSITIVE, 3.25, -7.0];
        let b = encode(&h, &data).unwrap();
        let mut expect = MAGIC.to_vec();
        for x in [h.config_hash, h.run_seed] {
            expect.extend_from_slice(&x.to_le_bytes());
        }
        for x in [h.generation, h.shard, h.shards] {
            expect.extend_from_slice(&x.to_le_bytes());
        }
        for x in [h.total_rows, h.row_start, h.n_rows] {
            expect.extend_from_slice(&x.to_le_bytes());
        }
        for x in [h.theta_dim, h.out_dim] {
            expect.extend_from_slice(&x.to_le_bytes());
        }
        assert_eq!(expect.len(), HEADER_LEN);
        for v in data {
            expect.extend_from_slice(&v.to_le_bytes());
        }
        let crc = crc32fast::hash(&expect);
        expect.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(b, expect);
        let (h2, d2) = decode(&b).unwrap();
        assert_eq!(h2, h);
        assert_eq!(
            d2.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            data.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }

    /// Streaming over several blocks (and a partial last one) gives the one-buffer bytes.
    #[test]
    fn streaming_crosses_blocks() {
        let rows = (2 * BLOCK + 7) as u64;
        let h = ShardHeader {
            total_rows: rows,
            n_rows: rows,
            theta_dim: 1,
            out_dim: 0,
            ..header(0)
        };
        let data: Vec<f64> = (0..rows).map(|i| i as f64 * 0.5).collect();
        let mut streamed = Vec::new();
        write_into(&mut streamed, &h, &data).unwrap();
        let (h2, d2) = decode(&streamed).unwrap();
        assert_eq!(h2, h);
        assert_eq!(d2, data);
        assert_eq!(streamed.len(), HEADER_LEN + 8 * data.len() + 4);
        assert_eq!(streamed, encode(&h, &data).unwrap());
    }

    #[test]
    fn bad_inputs_are_typed_errors() {
        let h = header(2);
        assert!(matches!(
            encode(&h, &[1.0; 5]),
            Err(Error::Shard {
                fault: ShardFault::DataLength { got: 5, expect: 6 },
                ..
            })
        ));
        let huge = ShardHeader {
            n_rows: u64::MAX,
            theta_dim: u32::MAX,
            ..h
        };
        assert!(matches!(
            encode(&huge, &[]),
            Err(Error::Shard {
                fault: ShardFault::SizeOverflow,
                ..
            })
        ));
        let mut v1 = encode(&h, &[0.0; 6]).unwrap();
        v1[..8].copy_from_slice(b"DPISHRD1");
        assert!(matches!(
            decode(&v1),
            Err(Error::Shard {
                fault: ShardFault::Version1,
                ..
            })
        ));
        assert!(matches!(
            decode(b"DPISHRD2"),
            Err(Error::Shard {
                fault: ShardFault::BadMagic,
                ..
            })
        ));
        // A header claiming more rows than the file holds (CRC fixed): size mismatch.
        let mut b = encode(&h, &[0.0; 6]).unwrap();
        b[52..60].copy_from_slice(&3u64.to_le_bytes());
        let n = b.len() - 4;
        let crc = crc32fast::hash(&b[..n]);
        b[n..].copy_from_slice(&crc.to_le_bytes());
        assert!(matches!(
            decode(&b),
            Err(Error::Shard {
                fault: ShardFault::SizeMismatch,
                ..
            })
        ));
    }

    #[test]
    fn ranges_partition_rows() {
        for total in [0u64, 1, 7, 1000, u64::MAX] {
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
        assert_eq!(shard_range(10, 0, 0), (0, 10));
        assert_eq!(shard_range(10, 5, 2), (10, 10));
    }

    #[test]
    fn names_round_trip() {
        let n = shard_file_name(3, 17, 100);
        assert_eq!(n, "gen003-shard00017-of00100.dpshard");
        assert_eq!(parse_name(&n, 3), Some((17, 100)));
        assert_eq!(parse_name(&n, 2), None);
        assert_eq!(parse_name("gen003-shard017-of00100.dpshard", 3), None);
    }
}
