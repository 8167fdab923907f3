#!/usr/bin/env Rscript
# A dpinfer worker in R: the gaussian-mean model, y_i ~ N(mu, 1), i = 1..outputs.
# Protocol: crates/cli/README.md, "Your own model". Needs the CRAN package `arrow`.
# Reads request batches (row, seed, mu) from stdin, answers one batch per request
# (row, output = list<double> of `outputs` values, reject = bool) on stdout.
# Diagnostics go to stderr (message()); stdout belongs to the protocol.
# NOTE: written against the documented R arrow API but NOT run by the dpinfer test suite:
# Debian 12, where the suite installs its tools, ships R (r-base-core 4.2.2) but no R Arrow
# reader (no r-cran-arrow or r-cran-nanoarrow), and CRAN is not reachable from the build
# machine. The Python workers are the tested references.
suppressPackageStartupMessages(library(arrow))

input <- RecordBatchStreamReader$create(FileInputStream$create("/dev/stdin"))
k <- as.integer(input$schema$metadata[["dpinfer.outputs"]])
sink <- FileOutputStream$create("/dev/stdout")
writer <- NULL
repeat {
  batch <- input$read_next_batch()
  if (is.null(batch)) break
  mu <- batch$mu$as_vector()
  # uint64 seeds arrive as doubles in R; any deterministic map of the seed keeps the
  # results independent of batching and worker count.
  seeds <- batch$seed$as_vector()
  out <- lapply(seq_along(mu), function(i) {
    set.seed(as.integer(seeds[i] %% .Machine$integer.max))
    mu[i] + rnorm(k)
  })
  answer <- record_batch(
    row = batch$row,
    output = Array$create(out, type = list_of(float64())),
    reject = Array$create(!is.finite(mu))
  )
  if (is.null(writer)) writer <- RecordBatchStreamWriter$create(sink, answer$schema)
  writer$write_batch(answer)
}
if (!is.null(writer)) writer$close()
