#!/bin/bash
# PNG plots of bench/apsp_bench's CSV (--csv PATH): time against size, one line per engine.
#   scripts/plot_apsp.sh results.csv [output folder, default docs]
# Writes apsp_dense.png (closure time of the dense engines against n) and apsp_multi.png
# (milliseconds per source of the many-source engines against V). Needs gnuplot.
set -euo pipefail
csv=${1:?usage: plot_apsp.sh results.csv [output folder]}
out=${2:-docs}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Dense: first row per (engine, mode, n) from the dense and compare sections.
awk -F, -v dir="$work" 'NR > 1 && ($1 == "dense" || $1 == "compare") {
    key = $2 "-" $3 "-" $6
    if (seen[key]++) next
    file = dir "/dense-" $2 "-" $3 ".dat"
    print $6, $11 >> file
  }' "$csv"
# Many-source: ms per source against V (random graphs of the multi section).
awk -F, -v dir="$work" 'NR > 1 && $1 == "multi" { print $6, $12 >> (dir "/multi-" $2 ".dat") }' "$csv"

plot_lines() {  # prefix -> gnuplot plot clauses, one per data file (sorted by x)
  local clauses=""
  for f in "$work"/$1-*.dat; do
    [ -e "$f" ] || continue
    sort -n -o "$f" "$f"
    local title
    title=$(basename "$f" .dat)
    title=${title#$1-}
    clauses+="'$f' using 1:2 with linespoints title '${title//_/\\_}', "
  done
  echo "${clauses%, }"
}

dense=$(plot_lines dense)
if [ -n "$dense" ]; then
  gnuplot <<GP
set terminal pngcairo size 900,600
set output '$out/apsp_dense.png'
set title 'Dense all-pairs on the GPU: closure time'
set xlabel 'vertices n'
set ylabel 'milliseconds'
set logscale xy
set key left top
set grid
plot $dense
GP
fi

multi=$(plot_lines multi)
if [ -n "$multi" ]; then
  gnuplot <<GP
set terminal pngcairo size 900,600
set output '$out/apsp_multi.png'
set title 'Many sources on random graphs (E = 4V, weights 1..V): time per source'
set xlabel 'vertices V'
set ylabel 'milliseconds per source'
set logscale xy
set key left top
set grid
plot $multi
GP
fi
ls -l "$out"/apsp_*.png 2>/dev/null || echo "nothing to plot in $csv"
