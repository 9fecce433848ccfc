# provenance: command: scripts/gpu-mem; date: 2026-11-22T10:26:52Z; gpu: NVIDIA H100 80GB HBM3; driver: 580.159.04
set label 99 "provenance: command: scripts/gpu-mem; date: 2026-11-22T10:26:52Z; gpu: NVIDIA H100 80GB HBM3; driver: 580.159.04" at screen 0.005,0.012 font ",7" noenhanced
set terminal pngcairo size 900,600
set output 'mem.png'
set logscale xy
set xlabel 'threads per block'
set ylabel 'pJ per 32-byte sector'
set title 'energy per access (pointer chase)'
set key top right
plot for [i=0:3] 'mem.dat' index i using 1:2:3 with yerrorlines title word('shared L1 L2 DRAM', i+1)
