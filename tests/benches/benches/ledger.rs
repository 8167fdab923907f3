//! Benchmarks of dpinfer-ledger on a pairs table of 10⁶ rows × 4 values (32 MB, the size
//! where the CLI's private step spent a quarter of its time fingerprinting and a third writing
//! tables): the input fingerprint and the shard encode/decode, each beside the ledger-v1 code
//! it replaced (kept here, verbatim in effect, as the baseline measured in the same run).
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

use dpinfer_ledger::shard::{self, HEADER_LEN, ShardHeader};
use dpinfer_math::Fnv1a;

const ROWS: usize = 1_000_000;
const WIDTH: usize = 4;

fn table() -> Vec<f64> {
    // Deterministic, all bits in play (no runs of equal bytes).
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    (0..ROWS * WIDTH)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 20.0 - 10.0
        })
        .collect()
}

fn header() -> ShardHeader {
    ShardHeader {
        config_hash: 7,
        run_seed: 1,
        generation: 0,
        shard: 0,
        shards: 1,
        total_rows: ROWS as u64,
        row_start: 0,
        n_rows: ROWS as u64,
        theta_dim: 1,
        out_dim: (WIDTH - 1) as u32,
    }
}

/// Ledger v1's fingerprint: FNV-1a byte by byte over each value, then the settings' JSON.
fn fingerprint_v1(pairs: &[f64], obs: &[f64], settings: &str) -> String {
    let mut h = Fnv1a::new();
    h.write_f64s(pairs);
    h.write_f64s(obs);
    h.write(settings.as_bytes());
    format!("{:016x}", h.finish())
}

/// Ledger v1's shard encoder: one `extend_from_slice` per value into a reserved buffer.
fn encode_v1(h: &ShardHeader, data: &[f64]) -> Vec<u8> {
    let mut b = Vec::with_capacity(HEADER_LEN + 8 * data.len() + 4);
    b.extend_from_slice(shard::MAGIC);
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
    b
}

/// Ledger v1's decoder body: CRC, then `collect` of mapped 8-byte chunks.
fn decode_v1(b: &[u8]) -> Vec<f64> {
    let (body, crc) = b.split_at(b.len() - 4);
    assert_eq!(
        crc32fast::hash(body),
        u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]])
    );
    body[HEADER_LEN..]
        .chunks_exact(8)
        .map(|c| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            f64::from_le_bytes(a)
        })
        .collect()
}

fn fingerprint(c: &mut Criterion) {
    let pairs = table();
    let obs = [0.25; 100];
    let settings = ("svt-abc", 1.0, 0.5, "gaussian-mean");
    let json = serde_json::to_string(&settings).unwrap();
    let mut g = c.benchmark_group("ledger_fingerprint_1e6x4");
    g.sample_size(10);
    g.throughput(Throughput::Bytes((8 * pairs.len()) as u64));
    g.bench_function("v1_fnv1a_bytewise", |b| {
        b.iter(|| fingerprint_v1(black_box(&pairs), black_box(&obs), black_box(&json)))
    });
    g.bench_function("v2_xxh3_128", |b| {
        b.iter(|| {
            dpinfer_ledger::fingerprint(black_box(&pairs), black_box(&obs), black_box(&settings))
                .unwrap()
        })
    });
    g.finish();
}

fn shard_codec(c: &mut Criterion) {
    let data = table();
    let h = header();
    let bytes = shard::encode(&h, &data).unwrap();
    assert_eq!(bytes, encode_v1(&h, &data), "the encoders disagree");
    let mut g = c.benchmark_group("ledger_shard_1e6x4");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("encode_v1_per_value", |b| {
        b.iter(|| encode_v1(black_box(&h), black_box(&data)))
    });
    g.bench_function("encode_v2_bulk", |b| {
        b.iter(|| shard::encode(black_box(&h), black_box(&data)).unwrap())
    });
    g.bench_function("decode_v1_collect", |b| {
        b.iter(|| decode_v1(black_box(&bytes)))
    });
    g.bench_function("decode_v2_bulk", |b| {
        b.iter(|| shard::decode(black_box(&bytes)).unwrap())
    });
    // Writing the table to a file (page cache, no fsync): encode the whole file into one
    // buffer and write it once (v1, and v2's `write_atomic`), or stream 1 MiB blocks with the
    // CRC computed on the way (`write_into`, no second copy in memory).
    let path = std::env::temp_dir().join(format!("dpinfer-ledger-bench-{}", std::process::id()));
    g.bench_function("write_encode_then_one_write", |b| {
        b.iter(|| {
            let bytes = encode_v1(black_box(&h), black_box(&data));
            std::fs::write(&path, &bytes).unwrap();
        })
    });
    g.bench_function("write_streamed_1mib_blocks", |b| {
        b.iter(|| {
            let mut f = std::fs::File::create(&path).unwrap();
            shard::write_into(&mut f, black_box(&h), black_box(&data)).unwrap();
        })
    });
    let _ = std::fs::remove_file(&path);
    g.finish();
}

criterion_group!(benches, fingerprint, shard_codec);
criterion_main!(benches);
