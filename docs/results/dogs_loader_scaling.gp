set logscale xy 2
set xlabel 'loader workers (threads)'
set ylabel 'images per second (decode + augment + copy)'
set key bottom right
set grid
set xrange [0.8:20.0]
plot '-' using 1:2 with linespoints lw 2 pt 7 title 'augment on the CPU', \
     1312.7 * x with lines dt 2 lc 1 title 'augment on the CPU: ideal', \
     '-' using 1:2 with linespoints lw 2 pt 7 title 'augment on the GPU', \
     1456.28 * x with lines dt 2 lc 2 title 'augment on the GPU: ideal', \
     19888.0 with lines lw 2 lc rgb 'black' title 'what one GPU epoch needs (19888/s)'
1 1312.7
2 2198.76
4 4131.39
8 7547.36
16 11634.0
e
1 1456.28
4 5353.27
16 11982.9
e
