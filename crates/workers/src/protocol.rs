//! Protocol version 1 on the wire: the request schema and batches, and the checks of an
//! answer batch (see the crate README for the text of the protocol).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, ArrayRef, Float64Array, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::error::rows_label;

/// Protocol version written to the request schema metadata (`dpinfer.protocol`).
pub const PROTOCOL_VERSION: &str = "1";

/// Schema metadata key of the protocol version.
pub const META_PROTOCOL: &str = "dpinfer.protocol";
/// Schema metadata key of the number of output values per row.
pub const META_OUTPUTS: &str = "dpinfer.outputs";

/// Schema metadata key of a request stream that is not a simulation: `"summarise"`.
pub const META_REQUEST: &str = "dpinfer.request";

/// The schema of a summarise request ([`crate::Pool::summarise`]): `row` (`uint64`) and `data`
/// (`list<float64>`); metadata `dpinfer.protocol = "1"`, `dpinfer.outputs` and
/// `dpinfer.request = "summarise"`.
pub(crate) fn summarise_schema(outputs: usize) -> SchemaRef {
    let fields = vec![
        Field::new("row", DataType::UInt64, false),
        Field::new(
            "data",
            DataType::List(Arc::new(Field::new("item", DataType::Float64, true))),
            false,
        ),
    ];
    let meta = HashMap::from([
        (META_PROTOCOL.to_string(), PROTOCOL_VERSION.to_string()),
        (META_OUTPUTS.to_string(), outputs.to_string()),
        (META_REQUEST.to_string(), "summarise".to_string()),
    ]);
    Arc::new(Schema::new(fields).with_metadata(meta))
}

/// One row to simulate.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Table row id.
    pub row: u64,
    /// The row's simulation seed (the worker simulates the row from this seed only).
    pub seed: u64,
    /// θ, in the order of the parameter names.
    pub theta: Vec<f64>,
}

/// What the simulator made of one row.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// `outputs` finite values.
    Output(Vec<f64>),
    /// The simulator rejected θ (the `reject` marker): a recoverable failure.
    Reject,
}

/// The request schema: `row` and `seed` (`uint64`), then one `float64` column per parameter;
/// metadata `dpinfer.protocol = "1"` and `dpinfer.outputs`.
///
/// # Errors
/// A parameter named `row` or `seed`, an empty or repeated name (the message).
pub(crate) fn request_schema(names: &[String], outputs: usize) -> Result<SchemaRef, String> {
    let mut fields = vec![
        Field::new("row", DataType::UInt64, false),
        Field::new("seed", DataType::UInt64, false),
    ];
    for n in names {
        if n.is_empty() || n == "row" || n == "seed" || fields.iter().any(|f| f.name() == n) {
            return Err(format!(
                "parameter name {n:?} is empty, reserved or repeated"
            ));
        }
        fields.push(Field::new(n, DataType::Float64, false));
    }
    let meta = HashMap::from([
        (META_PROTOCOL.to_string(), PROTOCOL_VERSION.to_string()),
        (META_OUTPUTS.to_string(), outputs.to_string()),
    ]);
    Ok(Arc::new(Schema::new(fields).with_metadata(meta)))
}

/// The record batch of `chunk` under `schema` (θ of length `d` each, checked by the caller).
pub(crate) fn request_batch(
    schema: &SchemaRef,
    d: usize,
    chunk: &[Request],
) -> Result<RecordBatch, String> {
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from_iter_values(chunk.iter().map(|r| r.row))),
        Arc::new(UInt64Array::from_iter_values(chunk.iter().map(|r| r.seed))),
    ];
    for k in 0..d {
        cols.push(Arc::new(Float64Array::from_iter_values(
            chunk.iter().map(|r| r.theta[k]),
        )));
    }
    RecordBatch::try_new(Arc::clone(schema), cols).map_err(|e| e.to_string())
}

/// The answers to `chunk` in request order, from an answer batch holding the same rows in
/// any order, `outputs` finite values each (or the reject marker).
///
/// # Errors
/// The protocol violation, naming the row.
pub(crate) fn parse_answer(
    b: &RecordBatch,
    chunk: &[Request],
    outputs: usize,
) -> Result<Vec<Answer>, String> {
    let label = || rows_label(&chunk.iter().map(|r| r.row).collect::<Vec<_>>());
    let rows = b
        .column_by_name("row")
        .ok_or("the answer has no `row` column")?;
    let ids = integer_ids(rows.as_ref())?;
    if ids.len() != chunk.len() {
        return Err(format!(
            "the answer has {} rows for a batch of {} ({})",
            ids.len(),
            chunk.len(),
            label()
        ));
    }
    let output = b
        .column_by_name("output")
        .ok_or("the answer has no `output` column")?;
    let reject = match b.column_by_name("reject") {
        None => None,
        Some(c) => Some(
            c.as_boolean_opt()
                .ok_or("the `reject` column must be of type bool")?,
        ),
    };
    // Workers usually answer in request order: then no index is needed.
    let in_order = ids.iter().zip(chunk).all(|(id, r)| *id == r.row);
    let index: HashMap<u64, usize> = if in_order {
        HashMap::new()
    } else {
        chunk.iter().enumerate().map(|(i, r)| (r.row, i)).collect()
    };
    let lists = Lists::new(output.as_ref())?;
    let mut out: Vec<Option<Answer>> = vec![None; chunk.len()];
    for (i, id) in ids.iter().enumerate() {
        let found = if in_order { Some(&i) } else { index.get(id) };
        let Some(&pos) = found else {
            return Err(format!(
                "the answer holds row id {id}, which is not in the batch ({})",
                label()
            ));
        };
        if out[pos].is_some() {
            return Err(format!("the answer holds row {id} twice"));
        }
        if reject.is_some_and(|r| r.is_valid(i) && r.value(i)) {
            out[pos] = Some(Answer::Reject);
            continue;
        }
        if output.is_null(i) {
            return Err(format!("row {id}: null output without `reject = true`"));
        }
        let values = lists.row(i, *id)?;
        if values.len() != outputs {
            return Err(format!(
                "row {id}: {} output values, model.outputs = {outputs}",
                values.len()
            ));
        }
        if let Some(j) = values.iter().position(|v| !v.is_finite()) {
            return Err(format!(
                "row {id}: output {j} is {} (mark a θ the simulator cannot handle with \
                 reject = true)",
                values[j]
            ));
        }
        out[pos] = Some(Answer::Output(values.to_vec()));
    }
    out.into_iter()
        .zip(chunk)
        .map(|(a, r)| a.ok_or_else(|| format!("row {} is missing from the answer", r.row)))
        .collect()
}

/// The `row` column as u64: any integer type, or `float64` holding integers (R writes
/// `int32`/`double`).
fn integer_ids(a: &dyn Array) -> Result<Vec<u64>, String> {
    let bad = || "the `row` column must hold non-negative integers".to_string();
    if a.null_count() > 0 {
        return Err("the `row` column holds nulls".into());
    }
    Ok(match a.data_type() {
        DataType::UInt64 => a.as_primitive::<UInt64Type>().values().to_vec(),
        DataType::UInt32 => a
            .as_primitive::<UInt32Type>()
            .values()
            .iter()
            .map(|&v| u64::from(v))
            .collect(),
        DataType::Int64 => a
            .as_primitive::<Int64Type>()
            .values()
            .iter()
            .map(|&v| u64::try_from(v).map_err(|_| bad()))
            .collect::<Result<_, _>>()?,
        DataType::Int32 => a
            .as_primitive::<Int32Type>()
            .values()
            .iter()
            .map(|&v| u64::try_from(v).map_err(|_| bad()))
            .collect::<Result<_, _>>()?,
        DataType::Float64 => a
            .as_primitive::<Float64Type>()
            .values()
            .iter()
            .map(|&v| {
                #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
                if v >= 0.0 && v.fract() == 0.0 && v < 9_007_199_254_740_992.0 {
                    Ok(v as u64)
                } else {
                    Err(bad())
                }
            })
            .collect::<Result<_, _>>()?,
        other => {
            return Err(format!(
                "the `row` column has type {other}, expected uint64"
            ));
        }
    })
}

/// The `output` column: a fixed-size, regular or large list of `float64`, read through its
/// offsets and one child buffer (no per-row array).
struct Lists<'a> {
    values: &'a Float64Array,
    /// Value range of row `i`: `offsets[i]..offsets[i + 1]`, or `i·k..(i+1)·k` when `None`.
    offsets: Option<Vec<usize>>,
    k: usize,
}

impl<'a> Lists<'a> {
    fn new(a: &'a dyn Array) -> Result<Self, String> {
        let float = |v: &'a ArrayRef| {
            v.as_primitive_opt::<Float64Type>()
                .ok_or_else(|| "the `output` lists must hold float64 values".to_string())
        };
        let to_usize = |o: i64| usize::try_from(o).map_err(|_| "negative list offset".to_string());
        match a.data_type() {
            DataType::FixedSizeList(..) => {
                let l = a.as_fixed_size_list();
                Ok(Self {
                    values: float(l.values())?,
                    offsets: None,
                    k: usize::try_from(l.value_length()).map_err(|_| "negative list size")?,
                })
            }
            DataType::List(_) => {
                let l = a.as_list::<i32>();
                Ok(Self {
                    values: float(l.values())?,
                    offsets: Some(
                        l.value_offsets()
                            .iter()
                            .map(|&o| to_usize(i64::from(o)))
                            .collect::<Result<_, _>>()?,
                    ),
                    k: 0,
                })
            }
            DataType::LargeList(_) => {
                let l = a.as_list::<i64>();
                Ok(Self {
                    values: float(l.values())?,
                    offsets: Some(
                        l.value_offsets()
                            .iter()
                            .map(|&o| to_usize(o))
                            .collect::<Result<_, _>>()?,
                    ),
                    k: 0,
                })
            }
            other => Err(format!(
                "the `output` column has type {other}, expected a list of float64"
            )),
        }
    }

    /// Row `i`'s values (row id `id` for the message).
    fn row(&self, i: usize, id: u64) -> Result<&'a [f64], String> {
        let (lo, hi) = match &self.offsets {
            None => (i * self.k, (i + 1) * self.k),
            Some(o) => (o[i], o[i + 1]),
        };
        let all = self.values.values();
        if hi > all.len() || lo > hi {
            return Err(format!("row {id}: the output list is out of bounds"));
        }
        if self.values.null_count() > 0 && (lo..hi).any(|j| self.values.is_null(j)) {
            return Err(format!("row {id}: null inside the output list"));
        }
        Ok(&all[lo..hi])
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;
    use arrow_array::{BooleanArray, FixedSizeListArray, Int32Array};

    fn req(rows: &[u64]) -> Vec<Request> {
        rows.iter()
            .map(|&row| Request {
                row,
                seed: row * 3,
                theta: vec![0.5],
            })
            .collect()
    }

    fn answer(
        ids: ArrayRef,
        values: &[Option<Vec<f64>>],
        reject: Option<Vec<bool>>,
    ) -> RecordBatch {
        let list = FixedSizeListArray::from_iter_primitive::<Float64Type, _, _>(
            values.iter().map(|v| {
                v.as_ref()
                    .map(|v| v.iter().map(|&x| Some(x)).collect::<Vec<_>>())
            }),
            2,
        );
        let mut cols: Vec<(&str, ArrayRef)> = vec![("row", ids), ("output", Arc::new(list))];
        if let Some(r) = reject {
            cols.push(("reject", Arc::new(BooleanArray::from(r))));
        }
        RecordBatch::try_from_iter(cols).unwrap()
    }

    #[test]
    fn answers_come_back_in_request_order_whatever_the_answer_order() {
        let chunk = req(&[4, 5, 6]);
        let b = answer(
            Arc::new(Int32Array::from(vec![6, 4, 5])),
            &[Some(vec![6.0, 6.5]), None, Some(vec![5.0, 5.5])],
            Some(vec![false, true, false]),
        );
        let a = parse_answer(&b, &chunk, 2).unwrap();
        assert_eq!(
            a,
            vec![
                Answer::Reject,
                Answer::Output(vec![5.0, 5.5]),
                Answer::Output(vec![6.0, 6.5])
            ]
        );
    }

    #[test]
    fn regular_large_and_sliced_lists_are_read_through_their_offsets() {
        use arrow_array::{LargeListArray, ListArray};
        let chunk = req(&[7, 8]);
        let rows = || {
            vec![
                None,
                Some(vec![Some(1.0), Some(2.0)]),
                Some(vec![Some(3.0), Some(4.0)]),
            ]
        };
        let want = vec![
            Answer::Output(vec![1.0, 2.0]),
            Answer::Output(vec![3.0, 4.0]),
        ];
        let ids: ArrayRef = Arc::new(UInt64Array::from(vec![7, 8]));
        let lists: Vec<ArrayRef> = vec![
            Arc::new(ListArray::from_iter_primitive::<Float64Type, _, _>(rows()).slice(1, 2)),
            Arc::new(LargeListArray::from_iter_primitive::<Float64Type, _, _>(rows()).slice(1, 2)),
            Arc::new(
                FixedSizeListArray::from_iter_primitive::<Float64Type, _, _>(
                    vec![Some(vec![Some(9.0), Some(9.0)])]
                        .into_iter()
                        .chain(rows().into_iter().skip(1)),
                    2,
                )
                .slice(1, 2),
            ),
        ];
        for list in lists {
            let b = RecordBatch::try_from_iter(vec![("row", Arc::clone(&ids)), ("output", list)])
                .unwrap();
            assert_eq!(parse_answer(&b, &chunk, 2).unwrap(), want);
        }
    }

    #[test]
    fn every_protocol_violation_is_named() {
        let chunk = req(&[4, 5]);
        let ok = Some(vec![1.0, 2.0]);
        let cases: Vec<(RecordBatch, &str)> = vec![
            (
                answer(
                    Arc::new(UInt64Array::from(vec![4, 9])),
                    &[ok.clone(), ok.clone()],
                    None,
                ),
                "row id 9, which is not in the batch (rows 4..=5)",
            ),
            (
                answer(
                    Arc::new(UInt64Array::from(vec![4, 4])),
                    &[ok.clone(), ok.clone()],
                    None,
                ),
                "row 4 twice",
            ),
            (
                answer(
                    Arc::new(UInt64Array::from(vec![4])),
                    core::slice::from_ref(&ok),
                    None,
                ),
                "1 rows for a batch of 2",
            ),
            (
                answer(
                    Arc::new(UInt64Array::from(vec![4, 5])),
                    &[ok.clone(), Some(vec![1.0, f64::INFINITY])],
                    None,
                ),
                "row 5: output 1 is inf",
            ),
            (
                answer(
                    Arc::new(UInt64Array::from(vec![4, 5])),
                    &[ok.clone(), None],
                    None,
                ),
                "row 5: null output without `reject = true`",
            ),
            (
                answer(
                    Arc::new(Float64Array::from(vec![4.0, 5.5])),
                    &[ok.clone(), ok.clone()],
                    None,
                ),
                "non-negative integers",
            ),
            (
                answer(
                    Arc::new(Int32Array::from(vec![4, -5])),
                    &[ok.clone(), ok],
                    None,
                ),
                "non-negative integers",
            ),
        ];
        for (b, want) in cases {
            let e = parse_answer(&b, &chunk, 2).unwrap_err();
            assert!(e.contains(want), "{want}: {e}");
        }
        let b = answer(
            Arc::new(UInt64Array::from(vec![4, 5])),
            &[Some(vec![1.0, 2.0]), Some(vec![1.0, 2.0])],
            None,
        );
        let e = parse_answer(&b, &chunk, 3).unwrap_err();
        assert!(
            e.contains("row 4: 2 output values, model.outputs = 3"),
            "{e}"
        );
    }

    #[test]
    fn reserved_and_repeated_parameter_names_are_refused() {
        for names in [vec!["row"], vec!["seed"], vec!["a", "a"], vec![""]] {
            let names: Vec<String> = names.into_iter().map(String::from).collect();
            assert!(request_schema(&names, 1).is_err(), "{names:?}");
        }
        let s = request_schema(&["mu".into()], 7).unwrap();
        assert_eq!(s.metadata()[META_OUTPUTS], "7");
        assert_eq!(s.metadata()[META_PROTOCOL], "1");
    }
}
