set logscale xy 2
set xlabel 'loader workers (threads)'
set ylabel 'images per second (decode + augment + copy)'
set key top left
set grid
set xrange [0.8:20.0]
plot '-' using 1:2 with linespoints lw 2 pt 7 title 'augment on the CPU', \
     2018.62 * x with lines dt 2 lc 1 title 'augment on the CPU: ideal', \
     '-' using 1:2 with linespoints lw 2 pt 7 title 'augment on the GPU', \
     1922.77 * x with lines dt 2 lc 2 title 'augment on the GPU: ideal', \
     22272.0 with lines lw 2 lc rgb 'black' title 'what one GPU epoch needs (22272/s)'
1 2018.62
4 6077.94
8 11500.4
16 17945.5
e
1 1922.77
4 8009.04
16 25057.3
e
