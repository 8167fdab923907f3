#!/bin/sh
# The calibration evidence table of crates/cli/README.md ("Calibration evidence"): every
# sampler family on the Gaussian-mean and SIR models, at ε = ∞ (non-private samplers) or
# ε = 10 and 1, K replicates each, through `dpinfer calibrate`. Not run by CI.
#
#   cargo install --locked --path crates/cli            # or put target/release on PATH
#   sh examples/calibration/evidence.sh [K] [OUT] [GLOB]  # K = 200, OUT = results/calibration,
#                                                         # GLOB = "*" (configs gm-*, sir-*)
#
# Prints one Markdown row per run: model, sampler, ε, K, verdict, the worst test (its parameter,
# Holm-adjusted p-value and dispersion: > 0 tails, < 0 centre) and the wall time. SIR has no
# per-row likelihood, so the MCMC samplers cannot run on it: their rows (the Gaussian-mean MCMC
# configs with the SIR model) show the refusal `dpinfer calibrate` gives.
set -eu
K=${1:-200}
OUT=${2:-results/calibration}
GLOB=${3:-*}
HERE=$(dirname "$0")
mkdir -p "$OUT"

# row CONFIG NAME EPS SHOWN: calibrates CONFIG with privacy.epsilon = EPS into OUT/NAME-epsEPS
# and prints its row, ε shown as SHOWN.
row() {
  cfg=$1 name=$2 eps=$3 shown=$4
  run="$OUT/$name-eps$eps"
  sed "s/^epsilon = .*/epsilon = $eps.0/" "$cfg" > "$run.toml"
  t0=$(date +%s.%N)
  dpinfer calibrate "$run.toml" --replicates "$K" --out "$run" > "$run.txt" 2> "$run.err" || true
  t1=$(date +%s.%N)
  wall=$(echo "$t0 $t1" | awk '{ printf "%.0f s", $2 - $1 }')
  model=$(sed -n '/^\[model\]/,/^\[/ s/^name = "\(.*\)"/\1/p' "$run.toml")
  sampler=$(sed -n '/^\[sampler\]/,/^\[/ s/^kind = "\(.*\)"/\1/p' "$run.toml")
  if [ -f "$run/summary.json" ]; then
    verdict=$(grep -E '^(WARNING: )?(calibrated|over-)' "$run.txt" | sed -e 's/ (worst.*//' -e 's/: credible.*//')
    # the worst test's name (a parameter's or TARP) and Holm-adjusted p; its dispersion is
    # column 4 of its row of the printed table
    worst=$(sed -n 's/.*(worst: \([^,]*\), Holm-adjusted p = \([0-9.]*\);.*/\1/p' "$run.txt")
    p=$(sed -n 's/.*(worst: [^,]*, Holm-adjusted p = \([0-9.]*\);.*/\1/p' "$run.txt")
    disp=$(awk -v n="$worst" '$1 == n { print $4; exit }' "$run.txt")
    echo "| $model | $sampler | $shown | $K | $verdict | \`$worst\`, Holm p = $p, dispersion $disp | $wall |"
  else
    echo "| $model | $sampler | $shown | $K | error: $(tail -1 "$run.err" | sed -e "s/^error: //" -e "s/.*replicate [0-9]*: //") | | $wall |"
  fi
}

echo "| model | sampler | ε | K | verdict | worst test | wall |"
echo "|---|---|---|---|---|---|---|"
for cfg in "$HERE"/$GLOB.toml; do
  [ -f "$cfg" ] || continue # GLOB matched no config
  name=$(basename "$cfg" .toml)
  if grep -q '^epsilon' "$cfg"; then eps_list="10 1"; else eps_list="inf"; fi
  for eps in $eps_list; do
    row "$cfg" "$name" "$eps" "$([ "$eps" = inf ] && echo "∞" || echo "$eps")"
  done
done
# The MCMC samplers on SIR: the Gaussian-mean MCMC configs with [model] replaced by SIR's.
for cfg in "$HERE"/gm-rwmh.toml "$HERE"/gm-dp-*.toml; do
  name=sir-$(basename "$cfg" .toml | sed 's/^gm-//')
  case $name in $GLOB) ;; *) continue ;; esac
  sir="$OUT/$name.toml"
  awk -v src="$(basename "$cfg")" 'BEGIN { skip = 0; print "# " src " with the SIR model (evidence.sh)" }
       /^#/ { next }
       /^\[model\]/ { print "[model]\nname = \"sir\"\n"; skip = 1; next }
       /^\[/ { skip = 0 }
       !skip' "$cfg" > "$sir"
  if grep -q '^epsilon' "$sir"; then eps=10 shown="10 (any)"; else eps=inf shown="∞"; fi
  row "$sir" "$name" "$eps" "$shown"
done
