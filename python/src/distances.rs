//! `dpinfer.abc.RffMmd`: the ABCDP distance of `dpinfer-abc`/`dpinfer-distances` — the
//! random-feature MMD between each simulated data set and the private observation, with the
//! library's public feature map (`dpinfer_abc::summary::RffSummary`) and its sensitivity
//! (Park, Vinaroz & Jitkrittum 2021, Lemma 1: replace-one on the observed set).

use dpinfer_abc::summary::RffSummary;
use dpinfer_distances::{RffReference, Rows};
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::prelude::*;

use crate::errors::{abc as abc_err, invalid};

fn dist_err(e: dpinfer_distances::DistanceError) -> PyErr {
    invalid("sets", None, e.to_string())
}

/// The RFF MMD to a private observation (`observed`, shape (N, d)): public frequencies and
/// bandwidth from `seed` (the bandwidth given, or the median heuristic on `median_data`, a
/// **public** data set such as one prior-predictive simulation — never the observation).
#[pyclass(name = "RffMmd", module = "dpinfer._native", frozen)]
pub(crate) struct PyRffMmd {
    summary: RffSummary,
    observed: Vec<f64>,
    n: usize,
}

impl PyRffMmd {
    fn reference(&self) -> PyResult<RffReference<'_, Vec<f64>>> {
        let f = self.summary.features().map_err(abc_err)?;
        RffReference::new(
            f,
            Rows::new(&self.observed, self.summary.row_dim()).map_err(dist_err)?,
        )
        .map_err(dist_err)
    }
}

#[pymethods]
impl PyRffMmd {
    #[new]
    #[pyo3(signature = (observed, *, seed, features = 100, bandwidth = None, median_data = None))]
    fn new(
        observed: PyReadonlyArray2<'_, f64>,
        seed: u64,
        features: usize,
        bandwidth: Option<f64>,
        median_data: Option<PyReadonlyArray2<'_, f64>>,
    ) -> PyResult<Self> {
        let (n, d) = (observed.shape()[0], observed.shape()[1]);
        let obs: Vec<f64> = observed.as_array().iter().copied().collect();
        if n == 0 || d == 0 {
            return Err(invalid(
                "observed",
                None,
                "observed must have at least one row and one column".into(),
            ));
        }
        if obs.iter().any(|v| !v.is_finite()) {
            return Err(invalid(
                "observed",
                None,
                "observed holds NaN or infinity".into(),
            ));
        }
        let summary = match (bandwidth, median_data) {
            (Some(b), None) => RffSummary::from_seed(seed, d, features, b).map_err(abc_err)?,
            (None, Some(m)) => {
                if m.shape()[1] != d {
                    return Err(invalid(
                        "median_data",
                        None,
                        format!("median_data must have {d} columns like observed"),
                    ));
                }
                let data: Vec<f64> = m.as_array().iter().copied().collect();
                if data.iter().any(|v| !v.is_finite()) {
                    return Err(invalid(
                        "median_data",
                        None,
                        "median_data holds NaN or infinity".into(),
                    ));
                }
                RffSummary::from_data(seed, d, features, &data).map_err(abc_err)?
            }
            _ => {
                return Err(invalid(
                    "bandwidth",
                    None,
                    "give exactly one of bandwidth or median_data (a public data set, e.g. one \
                     prior-predictive simulation; never the private observation)"
                        .into(),
                ));
            }
        };
        Ok(Self {
            summary,
            observed: obs,
            n,
        })
    }

    /// Kernel bandwidth.
    #[getter]
    fn bandwidth(&self) -> f64 {
        self.summary.bandwidth()
    }

    /// Number of features D (the embedding length).
    #[getter]
    fn num_features(&self) -> usize {
        self.summary.num_features()
    }

    /// Standard-normal frequencies, shape (D/2, d).
    #[getter]
    fn frequencies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let d = self.summary.row_dim();
        let z = self.summary.frequencies().to_vec();
        PyArray1::from_vec(py, z).reshape([self.summary.num_features() / 2, d])
    }

    /// Rows N of the observation.
    #[getter]
    fn observed_rows(&self) -> usize {
        self.n
    }

    /// Sensitivity Δ of the distance to pass to `svt_abc`/`gaussian_abcdp`: 2/N (Lemma 1 for
    /// the unit-norm feature map) plus the floating-point slack for simulated sets of up to
    /// `sim_rows` rows (default N), under replace-one neighbours of the observation.
    #[pyo3(signature = (sim_rows = None))]
    fn sensitivity(&self, sim_rows: Option<usize>) -> PyResult<f64> {
        let r = self.reference()?;
        let s = r.sensitivity_for(sim_rows.unwrap_or(self.n));
        if s.value() >= f64::MAX {
            return Err(invalid(
                "sim_rows",
                None,
                "no finite sensitivity for these sizes".into(),
            ));
        }
        Ok(s.value())
    }

    /// RFF MMD ‖μ̂(Y*) − μ̂(Y_t)‖ ∈ [0, 2] of every simulated set: `sets` of shape (m, n·d)
    /// (the outputs of `simulate_pairs`, each row one data set of n rows of d values).
    /// Computed over all cores with the GIL released; bit-identical for any thread count.
    fn distances<'py>(
        &self,
        py: Python<'py>,
        sets: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let (m, k) = (sets.shape()[0], sets.shape()[1]);
        let d = self.summary.row_dim();
        if k == 0 || k % d != 0 {
            return Err(invalid(
                "sets",
                None,
                format!("each set must hold a positive multiple of {d} values, got {k}"),
            ));
        }
        let flat: Vec<f64> = sets.as_array().iter().copied().collect();
        let r = self.reference()?;
        let out = py.detach(|| -> Result<Vec<f64>, dpinfer_distances::DistanceError> {
            let rows: Vec<Rows<'_>> = flat
                .chunks_exact(k)
                .map(|s| Rows::new(s, d))
                .collect::<Result<_, _>>()?;
            let mut out = vec![0.0; m];
            r.mmd_many(&rows, &mut out)?;
            Ok(out)
        });
        Ok(out.map_err(dist_err)?.into_pyarray(py))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRffMmd>()
}
