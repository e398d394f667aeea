set logscale xy 2
set xlabel 'loader workers (threads)'
set ylabel 'images per second (decode + augment + copy)'
set key top left
set grid
set xrange [0.8:20.0]
plot '-' using 1:2 with linespoints lw 2 pt 7 title 'augment on the CPU', \
     1069.2 * x with lines dt 2 lc 1 title 'augment on the CPU: ideal', \
     '-' using 1:2 with linespoints lw 2 pt 7 title 'augment on the GPU', \
     2062.64 * x with lines dt 2 lc 2 title 'augment on the GPU: ideal', \
     11050.0 with lines lw 2 lc rgb 'black' title 'what one GPU epoch needs (11050/s)'
1 1069.2
2 2531.0
4 4643.51
8 7819.79
16 12984.4
e
1 2062.64
4 6331.34
16 16403.4
e
