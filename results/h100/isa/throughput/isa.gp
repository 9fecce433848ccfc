set terminal pngcairo size 1600,600
set output 'isa.png'
set logscale y
set style fill solid
set xtics rotate by -60 font ',8'
set ylabel 'pJ per thread operation'
set title 'energy per instruction (throughput mode)'
plot 'isa.dat' using 2:xtic(1) with boxes notitle
