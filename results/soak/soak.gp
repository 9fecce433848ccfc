set terminal pngcairo size 900,600
set output 'soak.png'
set datafile separator ','
set key top left
set multiplot layout 2,1 title "truewatt run on the fake NVML, default rates, 3600 s (scripts/soak)"
set ylabel 'RSS (MiB)'
set yrange [0:*]
plot 'soak.csv' skip 1 using ($1/60):($2/1024) with linespoints title 'truewatt RSS'
set xlabel 'minutes'
set ylabel 'CPU (% of one core)'
plot 'soak.csv' skip 1 using ($1/60):4 with linespoints title 'truewatt CPU over each interval'
unset multiplot
