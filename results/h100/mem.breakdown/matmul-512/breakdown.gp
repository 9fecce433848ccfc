set terminal pngcairo size 700,600
set output 'breakdown.png'
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.6
set ylabel 'energy (J)'
set key outside right
set title 'energy breakdown' noenhanced
plot for [i=2:7] 'breakdown.dat' using i:xtic(1) title columnhead(i) noenhanced
