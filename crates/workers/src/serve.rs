//! The worker side of the protocol, for simulators written in Rust (a compiled model, or a
//! test worker): read request batches, answer each with one batch.

use std::io::{BufReader, BufWriter, Read, Write};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, UInt64Type};
use arrow_array::{ArrayRef, BooleanArray, ListArray, RecordBatch, UInt64Array};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema};

use crate::error::WorkerError;
use crate::ipc::CheckedStream;
use crate::protocol::{Answer, META_OUTPUTS, META_PROTOCOL, PROTOCOL_VERSION, Request};

/// The largest request message body a worker accepts (a batch of 10⁶ rows of 100 parameters
/// is 800 MB).
const MAX_REQUEST_BYTES: u64 = 1 << 32;

fn protocol(reason: impl core::fmt::Display) -> WorkerError {
    WorkerError::Protocol {
        reason: reason.to_string(),
    }
}

/// Serves requests from `input` until it ends: for each request batch, `simulate(rows,
/// outputs)` returns `(row id, answer)` pairs (normally one per request row, `outputs` values
/// each), written to `output` as one answer batch (`row: uint64`, `output:
/// list<float64>`, `reject: bool`) and flushed.
///
/// The answers are written as given, so a test worker can also break the protocol (wrong
/// ids, lengths, NaN) to exercise the pool's checks.
///
/// # Errors
/// [`WorkerError::Protocol`]: `input` is not a protocol-1 request stream (another version,
/// no `dpinfer.outputs`, wrong column types) or `output` cannot be written.
pub fn serve<R, W, F>(input: R, output: W, mut simulate: F) -> Result<(), WorkerError>
where
    R: Read,
    W: Write,
    F: FnMut(&[Request], usize) -> Vec<(u64, Answer)>,
{
    let reader =
        CheckedStream::try_new(BufReader::new(input), MAX_REQUEST_BYTES).map_err(protocol)?;
    let meta = reader.schema().metadata().clone();
    match meta.get(META_PROTOCOL) {
        Some(v) if v == PROTOCOL_VERSION => {}
        other => {
            return Err(protocol(format!(
                "request protocol {other:?}, this worker speaks {PROTOCOL_VERSION:?}"
            )));
        }
    }
    let outputs: usize = meta
        .get(META_OUTPUTS)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| protocol("the request schema has no dpinfer.outputs"))?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("row", DataType::UInt64, false),
        Field::new(
            "output",
            DataType::List(Arc::new(Field::new("item", DataType::Float64, true))),
            true,
        ),
        Field::new("reject", DataType::Boolean, false),
    ]));
    let mut out = StreamWriter::try_new(BufWriter::new(output), &schema).map_err(protocol)?;
    out.flush().map_err(protocol)?;
    for batch in reader {
        let b = batch.map_err(protocol)?;
        let column = |i: usize| {
            b.column(i)
                .as_primitive_opt::<UInt64Type>()
                .ok_or_else(|| protocol("`row` and `seed` must be uint64"))
        };
        let (rows, seeds) = (column(0)?, column(1)?);
        let params: Vec<_> = (2..b.num_columns())
            .map(|j| {
                b.column(j)
                    .as_primitive_opt::<Float64Type>()
                    .ok_or_else(|| protocol("parameter columns must be float64"))
            })
            .collect::<Result<_, _>>()?;
        let requests: Vec<Request> = (0..b.num_rows())
            .map(|i| Request {
                row: rows.value(i),
                seed: seeds.value(i),
                theta: params.iter().map(|p| p.value(i)).collect(),
            })
            .collect();
        let answers = simulate(&requests, outputs);
        let list = ListArray::from_iter_primitive::<Float64Type, _, _>(answers.iter().map(
            |(_, a)| match a {
                Answer::Output(v) => Some(v.iter().map(|&x| Some(x)).collect::<Vec<_>>()),
                Answer::Reject => None,
            },
        ));
        let cols: Vec<ArrayRef> = vec![
            Arc::new(UInt64Array::from_iter_values(answers.iter().map(|a| a.0))),
            Arc::new(list),
            Arc::new(BooleanArray::from_iter(
                answers
                    .iter()
                    .map(|(_, a)| Some(matches!(a, Answer::Reject))),
            )),
        ];
        let batch = RecordBatch::try_new(Arc::clone(&schema), cols).map_err(protocol)?;
        out.write(&batch).map_err(protocol)?;
        out.flush().map_err(protocol)?;
    }
    out.finish().map_err(protocol)
}

/// [`serve`] on this process's stdin and stdout.
///
/// # Errors
/// As [`serve`].
pub fn serve_stdio<F>(simulate: F) -> Result<(), WorkerError>
where
    F: FnMut(&[Request], usize) -> Vec<(u64, Answer)>,
{
    serve(std::io::stdin().lock(), std::io::stdout().lock(), simulate)
}
