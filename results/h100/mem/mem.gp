# provenance: command: scripts/gpu-mem; date: 2026-11-22T12:09:42Z; gpu: NVIDIA H100 80GB HBM3; driver: 580.159.04
set label 99 "provenance: command: scripts/gpu-mem; date: 2026-11-22T12:09:42Z; gpu: NVIDIA H100 80GB HBM3; driver: 580.159.04" at screen 0.005,0.012 font ",7" noenhanced
set terminal pngcairo size 1000,650
set output 'mem.png'
set logscale xy
set xlabel 'threads per block'
set ylabel 'pJ per 32-byte sector'
set title 'energy per access (pointer chase; stores and LOAD+DIV beside the loads)'
set key outside right
t = 'load_shared load_l1 load_l2 load_dram store_shared store_l2 store_dram load+div_l1 load+div_l2 load+div_dram'
plot for [i=0:9] 'mem.dat' index i using 1:2:3 with yerrorlines title word(t, i+1) noenhanced
