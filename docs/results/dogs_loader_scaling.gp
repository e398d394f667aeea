set logscale xy 2
set xlabel 'loader workers (threads)'
set ylabel 'images per second (decode + augment + copy)'
set key bottom right
set grid
set xrange [0.8:20.0]
plot '-' using 1:2 with linespoints lw 2 pt 7 title 'augment on the CPU', \
     1310.23 * x with lines dt 2 lc 1 title 'augment on the CPU: ideal', \
     '-' using 1:2 with linespoints lw 2 pt 7 title 'augment on the GPU', \
     2546.07 * x with lines dt 2 lc 2 title 'augment on the GPU: ideal', \
     19802.0 with lines lw 2 lc rgb 'black' title 'what one GPU epoch needs (19802/s)'
1 1310.23
2 3161.34
4 6196.7
8 12090.3
16 13998.9
e
1 2546.07
4 6796.17
16 16131.7
e
