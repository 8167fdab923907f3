//! A compiled external simulator for `dpinfer` (`[model] kind = "command"`), speaking the
//! worker protocol of the CLI README ("Your own model"): Arrow IPC streams on stdin/stdout.
//!
//! Model: the gaussian-mean model's simulator, y_i = μ + σ·z_i for i = 1..outputs with z_i
//! standard normal from the row's seed (σ from `SIGMA`, default 1). The output length comes
//! from the request schema's `dpinfer.outputs` metadata.
//!
//! For the CLI's fault-injection tests it misbehaves on request, through
//! `DPINFER_TEST_FAULT=<fault>@<row>` (`crash`, `hang`, `garbage`, `wrong-id`, `dims`, `nan`,
//! `crash-once` = crash only in the first worker process), and rejects every μ below
//! `DPINFER_TEST_REJECT_BELOW`.
//!
//! Build: `cargo build --release -p dpinfer-cli --example worker_gaussian`.
#![allow(
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::std_instead_of_core,
    clippy::std_instead_of_alloc
)]

use std::io::{BufReader, BufWriter, Write};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, UInt64Type};
use arrow_array::{ArrayRef, BooleanArray, ListArray, RecordBatch, UInt64Array};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema};
use dpinfer::simulators::{SimStream, dist};

fn main() {
    let fault = std::env::var("DPINFER_TEST_FAULT").unwrap_or_default();
    let (fault, fault_row) = match fault.split_once('@') {
        Some((f, r)) => (f.to_string(), r.parse::<u64>().unwrap_or(u64::MAX)),
        None => (String::new(), u64::MAX),
    };
    let first_worker = std::env::var("DPINFER_WORKER").is_ok_and(|w| w == "0");
    let reject_below: f64 = std::env::var("DPINFER_TEST_REJECT_BELOW")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NEG_INFINITY);
    let sigma: f64 = std::env::var("SIGMA")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0);

    let reader = StreamReader::try_new(BufReader::new(std::io::stdin()), None).unwrap();
    let k: usize = reader.schema().metadata()["dpinfer.outputs"]
        .parse()
        .unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("row", DataType::UInt64, false),
        Field::new(
            "output",
            DataType::List(Arc::new(Field::new("item", DataType::Float64, true))),
            true,
        ),
        Field::new("reject", DataType::Boolean, false),
    ]));
    let mut out = StreamWriter::try_new(BufWriter::new(std::io::stdout()), &schema).unwrap();
    out.flush().unwrap();
    for batch in reader {
        let b = batch.unwrap();
        let rows = b
            .column_by_name("row")
            .unwrap()
            .as_primitive::<UInt64Type>();
        let seeds = b
            .column_by_name("seed")
            .unwrap()
            .as_primitive::<UInt64Type>();
        // θ is the first parameter column (the model has one parameter, μ).
        let mu = b.column(2).as_primitive::<Float64Type>();
        let mut ids = Vec::new();
        let mut values = Vec::new();
        let mut reject = Vec::new();
        let mut lens = Vec::new();
        for i in 0..b.num_rows() {
            let (row, seed, m) = (rows.value(i), seeds.value(i), mu.value(i));
            let hit = row == fault_row;
            if hit {
                eprintln!("worker: injecting fault {fault:?} at row {row}");
                match fault.as_str() {
                    "crash" => std::process::exit(3),
                    "crash-once" if first_worker => std::process::exit(3),
                    "hang" => std::thread::sleep(std::time::Duration::from_secs(3600)),
                    "garbage" => {
                        let mut o = std::io::stdout();
                        o.write_all(b"Traceback (most recent call last): oops\n")
                            .unwrap();
                        o.flush().unwrap();
                        std::thread::sleep(std::time::Duration::from_secs(3600));
                    }
                    _ => {}
                }
            }
            ids.push(if hit && fault == "wrong-id" {
                row + 1_000_000
            } else {
                row
            });
            reject.push(m < reject_below);
            let mut rng = SimStream::new(seed, 0);
            let len = if hit && fault == "dims" { k + 1 } else { k };
            lens.push(len);
            for j in 0..len {
                let v = m + sigma * dist::std_normal(&mut rng);
                values.push(if hit && fault == "nan" && j == 1 {
                    f64::NAN
                } else {
                    v
                });
            }
        }
        // One list per row (a `list<float64>`; the Python worker uses a fixed-size list).
        let mut at = 0;
        let list = ListArray::from_iter_primitive::<Float64Type, _, _>(lens.iter().map(|&l| {
            at += l;
            Some(
                values[at - l..at]
                    .iter()
                    .map(|&v| Some(v))
                    .collect::<Vec<_>>(),
            )
        }));
        let cols: Vec<ArrayRef> = vec![
            Arc::new(UInt64Array::from(ids)),
            Arc::new(list),
            Arc::new(BooleanArray::from(reject)),
        ];
        out.write(&RecordBatch::try_new(Arc::clone(&schema), cols).unwrap())
            .unwrap();
        out.flush().unwrap();
    }
}
