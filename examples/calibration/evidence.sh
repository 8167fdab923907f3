#!/bin/sh
# The calibration evidence table of crates/cli/README.md ("Calibration evidence"): every
# sampler family on the Gaussian-mean model, at ε = ∞ (non-private samplers) or ε = 10 and 1,
# K replicates each, through `dpinfer calibrate`. Not run by CI.
#
#   cargo install --locked --path crates/cli            # or put target/release on PATH
#   sh examples/calibration/evidence.sh [K] [OUT] [GLOB]  # K = 200, OUT = results/calibration,
#                                                         # GLOB = "*" (configs gm-*, sir-*)
#
# Prints one Markdown row per run: model, sampler, ε, K, verdict, the worst test (its parameter,
# Holm-adjusted p-value and dispersion: > 0 tails, < 0 centre) and the wall time.
set -eu
K=${1:-200}
OUT=${2:-results/calibration}
GLOB=${3:-*}
HERE=$(dirname "$0")
mkdir -p "$OUT"
echo "| model | sampler | ε | K | verdict | worst test | wall |"
echo "|---|---|---|---|---|---|---|"
for cfg in "$HERE"/$GLOB.toml; do
  name=$(basename "$cfg" .toml)
  if grep -q '^epsilon' "$cfg"; then eps_list="10 1"; else eps_list="inf"; fi
  for eps in $eps_list; do
    run="$OUT/$name-eps$eps"
    sed "s/^epsilon = .*/epsilon = $eps.0/" "$cfg" > "$run.toml"
    t0=$(date +%s.%N)
    dpinfer calibrate "$run.toml" --replicates "$K" --out "$run" > "$run.txt" 2> "$run.err" || true
    t1=$(date +%s.%N)
    wall=$(echo "$t0 $t1" | awk '{ printf "%.0f s", $2 - $1 }')
    model=$(sed -n '/^\[model\]/,/^\[/ s/^name = "\(.*\)"/\1/p' "$cfg")
    sampler=$(sed -n '/^\[sampler\]/,/^\[/ s/^kind = "\(.*\)"/\1/p' "$cfg")
    shown=$([ "$eps" = inf ] && echo "∞" || echo "$eps")
    if [ -f "$run/summary.json" ]; then
      verdict=$(grep -E '^(WARNING: )?(calibrated|over-)' "$run.txt" | sed -e 's/ (worst.*//' -e 's/: credible.*//')
      worst=$(sed -n 's/.*(worst: \([^,]*\), Holm-adjusted p = \([0-9.]*\);.*/\1, Holm p = \2/p' "$run.txt")
      # the worst test's row of the printed table: θ[j] is line j + 3, TARP its own line
      j=$(echo "$worst" | sed -n 's/^θ\[\([0-9]*\)\].*/\1/p')
      if [ -n "$j" ]; then
        disp=$(sed -n "$((j + 3))p" "$run.txt" | awk '{ print $4 }')
      else
        disp=$(grep -E '^TARP ' "$run.txt" | awk '{ print $4 }')
      fi
      echo "| $model | $sampler | $shown | $K | $verdict | \`${worst%%,*}\`,${worst#*,}, dispersion $disp | $wall |"
    else
      echo "| $model | $sampler | $shown | $K | error: $(tail -1 "$run.err" | sed -e "s/^error: //" -e "s/.*replicate [0-9]*: //") | | $wall |"
    fi
  done
done
