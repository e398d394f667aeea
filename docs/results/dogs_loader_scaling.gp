set logscale xy 2
set xlabel 'loader workers (threads)'
set ylabel 'images per second (decode + augment + copy)'
set key top left
set grid
set xrange [0.8:20.0]
plot '-' using 1:2 with linespoints lw 2 pt 7 title 'augment on the CPU', \
     2038.12 * x with lines dt 2 lc 1 title 'augment on the CPU: ideal', \
     '-' using 1:2 with linespoints lw 2 pt 7 title 'augment on the GPU', \
     2575.89 * x with lines dt 2 lc 2 title 'augment on the GPU: ideal', \
     11020.0 with lines lw 2 lc rgb 'black' title 'what one GPU epoch needs (11020/s)'
1 2038.12
2 3221.75
4 5279.77
8 11087.5
16 14392.2
e
1 2575.89
4 8115.83
16 18208.4
e
