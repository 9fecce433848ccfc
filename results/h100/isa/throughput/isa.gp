# provenance: command: scripts/gpu-isa throughput; date: 2026-11-22T10:59:49Z; gpu: NVIDIA H100 80GB HBM3; driver: 580.159.04
set label 99 "provenance: command: scripts/gpu-isa throughput; date: 2026-11-22T10:59:49Z; gpu: NVIDIA H100 80GB HBM3; driver: 580.159.04" at screen 0.005,0.012 font ",7" noenhanced
set terminal pngcairo size 1600,600
set output 'isa.png'
set logscale y
set style fill solid
set xtics rotate by -60 font ',8' noenhanced
set rmargin 8
set boxwidth 0.8
set ylabel 'pJ per thread operation'
set title 'energy per instruction (throughput mode)'
plot 'isa.dat' using 2:xtic(1) with boxes notitle
