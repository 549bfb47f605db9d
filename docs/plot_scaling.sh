#!/usr/bin/env bash
# Draw docs/img/cpu_scaling.png from docs/data/cpu_scaling.tsv (measured on the GPU
# machine's host; see the file's header) with gnuplot (Debian: gnuplot-nox).
set -euo pipefail
cd "$(dirname "$0")"
gnuplot <<'GP'
set terminal pngcairo size 900,420 font "DejaVu Sans,11"
set output "img/cpu_scaling.png"
set multiplot layout 1,2 title "CPU backends on the 16-core GPU host: cpu (own Householder) vs lapack (LAPACKE on OpenBLAS SkylakeX)"
set logscale xy 2
set xtics (1,2,4,8,16)
set xrange [0.85:19]
set xlabel "threads"
set grid
set key top right
set ylabel "ms"
set title "batched QR, 128 x 240x66"
plot "data/cpu_scaling.tsv" using 1:2 with linespoints lw 2 pt 7 title "cpu", \
     "" using 1:3 with linespoints lw 2 pt 5 title "lapack"
set title "hard CPI end to end"
plot "data/cpu_scaling.tsv" using 1:4 with linespoints lw 2 pt 7 title "cpu", \
     "" using 1:5 with linespoints lw 2 pt 5 title "lapack"
unset multiplot
GP
echo "wrote docs/img/cpu_scaling.png"
