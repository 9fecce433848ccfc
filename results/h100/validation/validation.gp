# provenance: command: scripts/gpu-validate; date: 2026-11-22T07:40:19Z; gpu: NVIDIA H100 80GB HBM3; driver: 580.159.04
set label 99 "provenance: command: scripts/gpu-validate; date: 2026-11-22T07:40:19Z; gpu: NVIDIA H100 80GB HBM3; driver: 580.159.04" at screen 0.005,0.012 font ",7" noenhanced
# truewatt validate plots from the .dat files beside this script. Run: gnuplot validation.gp
set terminal pngcairo size 1200,560 font ',10' noenhanced
set grid
# the first method (best, when present) black and bold, then 11 distinct colours
set linetype 1 lc rgb '#000000' lw 3 pt 7 ps 0.8 dt 1
set linetype 2 lc rgb '#1f77b4' lw 1.5 pt 4 ps 0.8 dt 1
set linetype 3 lc rgb '#ff7f0e' lw 1.5 pt 5 ps 0.8 dt 1
set linetype 4 lc rgb '#2ca02c' lw 1.5 pt 6 ps 0.8 dt 1
set linetype 5 lc rgb '#d62728' lw 1.5 pt 7 ps 0.8 dt 1
set linetype 6 lc rgb '#9467bd' lw 1.5 pt 4 ps 0.8 dt 1
set linetype 7 lc rgb '#8c564b' lw 1.5 pt 5 ps 0.8 dt 1
set linetype 8 lc rgb '#e377c2' lw 1.5 pt 6 ps 0.8 dt 2
set linetype 9 lc rgb '#7f7f7f' lw 1.5 pt 7 ps 0.8 dt 2
set linetype 10 lc rgb '#bcbd22' lw 1.5 pt 4 ps 0.8 dt 2
set linetype 11 lc rgb '#17becf' lw 1.5 pt 5 ps 0.8 dt 2
set linetype 12 lc rgb '#aec7e8' lw 1.5 pt 6 ps 0.8 dt 2
set linetype cycle 12

set xtics (1, 3, 10, 30, 100)
set output 'validation_short.png'
set title "Short kernels: energy per launch, error against the reference (clipped)"
set logscale x
unset logscale y
set xlabel 'kernel length [ms]'
set ylabel 'error [%]'
set yrange [-100:100]
set xrange [*:*]
set key outside right
unset object
set object 1 rect from graph 0, first -5 to graph 1, first 5 fc rgb '#dff0d8' fs solid noborder behind
set object 2 rect from graph 0, first -10 to graph 1, first 10 fc rgb '#f2f9ef' fs solid noborder behind
plot for [i=2:12] 'validation_short.dat' using 1:i with linespoints title columnhead(i)

set output 'validation_ratios.png'
set multiplot layout 1,2
set logscale x
unset logscale y
set yrange [*:*]
set xrange [*:*]
set ylabel 'energy ratio'
set key outside bottom center horizontal
set title "Linearity: E(2T) / E(T) (target 2)"
set xlabel 'T'
set xtics ("0.1s" 0.1, "0.5s" 0.5, "2s" 2)
unset object
set object 1 rect from graph 0, first 1.98 to graph 1, first 2.02 fc rgb '#dff0d8' fs solid noborder behind
set arrow 1 from graph 0, first 2 to graph 1, first 2 nohead dt 2 lc rgb '#2ca02c'
plot for [i=1:9] 'validation_linearity.dat' using ($1*(1+0.04*(i-(9+1)/2.0))):(column(2*i)):(column(2*i+1)) with yerrorlines title columnhead(2*i)
set title "Back to back: E(second) / E(first) (target 1)"
set xlabel 'gap'
set xtics ("50ms" 0.05, "0.3s" 0.3, "1s" 1)
unset object
set object 1 rect from graph 0, first 0.98 to graph 1, first 1.02 fc rgb '#dff0d8' fs solid noborder behind
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#2ca02c'
plot for [i=1:9] 'validation_b2b.dat' using ($1*(1+0.04*(i-(9+1)/2.0))):(column(2*i)):(column(2*i+1)) with yerrorlines title columnhead(2*i)
unset multiplot
unset arrow
set xtics autofreq

set output 'validation_loads.png'
set title "load_square: 30 ms on, 70 ms off (kernels shaded); the readings as published"
unset logscale
set xtics autofreq
set xrange [342.992618:354.444572]
set yrange [*:*]
set xlabel 'trace time [s]'
set ylabel 'power [W]'
set key outside bottom center horizontal
unset object
set object 1 rect from 343.492618, graph 0 to 343.522665, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 2 rect from 343.592855, graph 0 to 343.622889, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 3 rect from 343.693060, graph 0 to 343.723103, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 4 rect from 343.793262, graph 0 to 343.823304, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 5 rect from 343.893461, graph 0 to 343.923505, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 6 rect from 343.993635, graph 0 to 344.023667, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 7 rect from 344.093791, graph 0 to 344.123830, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 8 rect from 344.193975, graph 0 to 344.224015, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 9 rect from 344.294170, graph 0 to 344.324213, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 10 rect from 344.394385, graph 0 to 344.424427, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 11 rect from 344.494607, graph 0 to 344.524647, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 12 rect from 344.594812, graph 0 to 344.624957, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 13 rect from 344.695129, graph 0 to 344.725160, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 14 rect from 344.795341, graph 0 to 344.825383, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 15 rect from 344.895526, graph 0 to 344.925546, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 16 rect from 344.995741, graph 0 to 345.025776, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 17 rect from 345.095947, graph 0 to 345.125971, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 18 rect from 345.196130, graph 0 to 345.226152, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 19 rect from 345.296326, graph 0 to 345.326365, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 20 rect from 345.396544, graph 0 to 345.426584, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 21 rect from 345.496763, graph 0 to 345.526806, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 22 rect from 345.596976, graph 0 to 345.627015, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 23 rect from 345.697167, graph 0 to 345.727206, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 24 rect from 345.797365, graph 0 to 345.827400, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 25 rect from 345.897581, graph 0 to 345.927629, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 26 rect from 345.997820, graph 0 to 346.027860, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 27 rect from 346.098021, graph 0 to 346.128055, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 28 rect from 346.198210, graph 0 to 346.228254, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 29 rect from 346.298423, graph 0 to 346.328466, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 30 rect from 346.398650, graph 0 to 346.428691, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 31 rect from 346.498911, graph 0 to 346.528972, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 32 rect from 346.599232, graph 0 to 346.629277, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 33 rect from 346.699451, graph 0 to 346.729599, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 34 rect from 346.799890, graph 0 to 346.829918, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 35 rect from 346.900086, graph 0 to 346.930113, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 36 rect from 347.000274, graph 0 to 347.030302, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 37 rect from 347.100450, graph 0 to 347.130478, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 38 rect from 347.200657, graph 0 to 347.230683, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 39 rect from 347.300841, graph 0 to 347.330870, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 40 rect from 347.401029, graph 0 to 347.431055, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 41 rect from 347.501221, graph 0 to 347.531249, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 42 rect from 347.601423, graph 0 to 347.631476, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 43 rect from 347.701649, graph 0 to 347.731695, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 44 rect from 347.801888, graph 0 to 347.831934, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 45 rect from 347.902097, graph 0 to 347.932154, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 46 rect from 348.002321, graph 0 to 348.032363, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 47 rect from 348.102581, graph 0 to 348.132625, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 48 rect from 348.202844, graph 0 to 348.232904, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 49 rect from 348.303130, graph 0 to 348.333167, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 50 rect from 348.403327, graph 0 to 348.433370, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 51 rect from 348.503548, graph 0 to 348.533592, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 52 rect from 348.603758, graph 0 to 348.633802, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 53 rect from 348.703977, graph 0 to 348.734016, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 54 rect from 348.804187, graph 0 to 348.834229, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 55 rect from 348.904399, graph 0 to 348.934442, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 56 rect from 349.004611, graph 0 to 349.034648, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 57 rect from 349.104799, graph 0 to 349.134838, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 58 rect from 349.205009, graph 0 to 349.235055, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 59 rect from 349.305226, graph 0 to 349.335373, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 60 rect from 349.405549, graph 0 to 349.435576, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 61 rect from 349.505754, graph 0 to 349.535775, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 62 rect from 349.605937, graph 0 to 349.635959, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 63 rect from 349.706153, graph 0 to 349.736193, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 64 rect from 349.806423, graph 0 to 349.836445, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 65 rect from 349.906607, graph 0 to 349.936636, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 66 rect from 350.006793, graph 0 to 350.036816, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 67 rect from 350.106973, graph 0 to 350.136996, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 68 rect from 350.207155, graph 0 to 350.237183, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 69 rect from 350.307329, graph 0 to 350.337351, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 70 rect from 350.407510, graph 0 to 350.437530, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 71 rect from 350.507728, graph 0 to 350.537763, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 72 rect from 350.607935, graph 0 to 350.637975, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 73 rect from 350.708152, graph 0 to 350.738197, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 74 rect from 350.808376, graph 0 to 350.838415, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 75 rect from 350.908591, graph 0 to 350.938631, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 76 rect from 351.008792, graph 0 to 351.038827, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 77 rect from 351.109044, graph 0 to 351.139211, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 78 rect from 351.209473, graph 0 to 351.239530, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 79 rect from 351.309694, graph 0 to 351.339721, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 80 rect from 351.409899, graph 0 to 351.439927, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 81 rect from 351.510095, graph 0 to 351.540124, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 82 rect from 351.610297, graph 0 to 351.640325, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 83 rect from 351.710495, graph 0 to 351.740535, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 84 rect from 351.810716, graph 0 to 351.840757, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 85 rect from 351.910931, graph 0 to 351.940967, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 86 rect from 352.011150, graph 0 to 352.041190, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 87 rect from 352.111371, graph 0 to 352.141415, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 88 rect from 352.211615, graph 0 to 352.241656, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 89 rect from 352.311846, graph 0 to 352.341886, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 90 rect from 352.412064, graph 0 to 352.442105, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 91 rect from 352.512287, graph 0 to 352.542329, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 92 rect from 352.612534, graph 0 to 352.642588, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 93 rect from 352.712867, graph 0 to 352.742911, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 94 rect from 352.813089, graph 0 to 352.843130, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 95 rect from 352.913329, graph 0 to 352.943475, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 96 rect from 353.013652, graph 0 to 353.043684, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 97 rect from 353.113854, graph 0 to 353.143890, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 98 rect from 353.214042, graph 0 to 353.244079, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 99 rect from 353.314239, graph 0 to 353.344383, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
set object 100 rect from 353.414549, graph 0 to 353.444572, graph 1 fc rgb '#e8e8e8' fs solid noborder behind
plot 'validation_loads_power_buffer_w.dat' using 1:2 with steps lw 1 dt 1 lc rgb '#1f77b4' title 'power_buffer_w', \
     'validation_loads_power_instant_w.dat' using 1:2 with steps lw 1.5 dt 1 lc rgb '#ff7f0e' title 'power_instant_w', \
     'validation_loads_energy_j.dat' using 1:2 with steps lw 2.5 dt 1 lc rgb '#d62728' title 'energy_j: dE/dt between updates', \
     'validation_loads_power_usage_w.dat' using 1:2 with steps lw 2 dt 1 lc rgb '#9467bd' title 'power_usage_w'
