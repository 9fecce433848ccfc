# provenance: command: scripts/gpu-breakdown results/h100/mem.breakdown-copy; date: 2026-11-22T14:16:30Z; gpu: NVIDIA H100 80GB HBM3; driver: 580.159.04
set label 99 "provenance: command: scripts/gpu-breakdown results/h100/mem.breakdown-copy; date: 2026-11-22T14:16:30Z; gpu: NVIDIA H100 80GB HBM3; driver: 580.159.04" at screen 0.005,0.012 font ",7" noenhanced
set terminal pngcairo size 1100,600
set output 'breakdowns.png'
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.6
set ylabel 'share of the measured energy'
set key outside right
set title 'H100 energy breakdowns (memory: lower bounds from the pointer-chase calibration)' noenhanced
set yrange [0:1]
plot for [i=2:7] 'breakdowns.dat' using (column(i)/(column(2)+column(3)+column(4)+column(5)+column(6)+column(7))):xtic(1) title word('static shared L1 L2 DRAM rest', i-1)
