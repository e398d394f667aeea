# Seed 002 (apps/matmul_sweep): CPU vs GPU time of c = a . b, and square-GEMM GFLOP/s.
# CPU: Intel(R) Xeon(R) Processor, 16 threads
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# cpu: OpenBLAS + OpenMP, 16 threads (cblas_sdot for this shape, sgemm for the squares)
# gpu: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 81079 MiB, driver 13.0)
# cudnn: cuBLAS 13.1.0 on NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 81079 MiB, driver 13.0)
# Run in this folder: gnuplot matmul_sweep.gp  -> matmul_sweep.png/.svg, matmul_sweep_square.png/.svg

$cpu_matmul << EOD
100 0.001154
1000 0.0006235
10000 0.0013345
100000 0.004762
1000000 0.014362
10000000 0.430919
100000000 6.43694
EOD
$gpu_matmul << EOD
100 0.00936
1000 0.006832
10000 0.011408
100000 0.012048
1000000 0.01112
10000000 0.036944
100000000 0.268832
EOD
$cudnn_matmul << EOD
100 0.017936
1000 0.021632
10000 0.02216
100000 0.01536
1000000 0.01624
10000000 0.06152
100000000 0.378416
EOD
$cpu_generate_matmul << EOD
100 0.009118
1000 0.0319975
10000 0.037847
100000 0.268239
1000000 2.7714
10000000 26.1686
100000000 282.14
EOD
$gpu_generate_matmul << EOD
100 0.021984
1000 0.016096
10000 0.020368
100000 0.020352
1000000 0.020912
10000000 0.098992
100000000 0.757968
EOD
$cudnn_generate_matmul << EOD
100 0.027424
1000 0.030064
10000 0.030576
100000 0.023968
1000000 0.025264
10000000 0.120256
100000000 0.901568
EOD
$gpu_copies_matmul << EOD
100 0.041312
1000 0.036
10000 0.049472
100000 0.106032
1000000 0.82888
10000000 10.4445
100000000 104.194
EOD
$cudnn_copies_matmul << EOD
100 0.049264
1000 0.05184
10000 0.060944
100000 0.111376
1000000 0.815392
10000000 9.61125
100000000 107.723
EOD
$cpu_square << EOD
64 6.93723
128 92.4446
256 327.162
512 646.657
1024 951.047
2048 1041.57
4096 1157.65
EOD
$gpu_square << EOD
64 6.53791
128 292.898
256 2314.74
512 9436
1024 23522.2
2048 38707.3
4096 39953.9
EOD
$cudnn_square << EOD
64 29.5207
128 219.001
256 1558.06
512 10070.4
1024 30434.9
2048 48955.5
4096 50952.8
EOD

set logscale xy
set format x '10^{%L}'
set grid
set key top left
set style data linespoints
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1650,520 font ',10' } else { set terminal png size 1650,520 }
set output 'matmul_sweep.png'
set multiplot layout 1,3 title 'c = a . b, a [1,n], b [n,1]: median time per call'
set xlabel 'n'
set ylabel 'ms'
set title 'matmul only (data on the device)'
set arrow 1 from first 1000000, graph 0.9 to first 1000000, first 0.01112 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{6}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 10000000, graph 0.82 to first 10000000, first 0.06152 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{7}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set title 'random normal a, b + matmul'
set arrow 1 from first 1000, graph 0.9 to first 1000, first 0.016096 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{3}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 1000, graph 0.82 to first 1000, first 0.030064 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{3}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_generate_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_generate_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_generate_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set title 'with host <-> device copies'
plot $cpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu (no copies)', \
     $gpu_copies_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_copies_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
unset multiplot
set output
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 800,560 font ',10' } else { set terminal png size 800,560 }
set output 'matmul_sweep_square.png'
set logscale x 2
set format x '%g'
set xlabel 'n (n x n @ n x n)'
set ylabel 'GFLOP/s'
set key top left
set title 'square matmul, FP32'
set arrow 1 from first 128, graph 0.9 to first 128, first 292.898 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 128' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 64, graph 0.82 to first 64, first 29.5207 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 64' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set output
set logscale x 10
set format x '10^{%L}'
set terminal svg size 1650,520 dynamic font ',10'
set output 'matmul_sweep.svg'
set multiplot layout 1,3 title 'c = a . b, a [1,n], b [n,1]: median time per call'
set xlabel 'n'
set ylabel 'ms'
set title 'matmul only (data on the device)'
set arrow 1 from first 1000000, graph 0.9 to first 1000000, first 0.01112 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{6}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 10000000, graph 0.82 to first 10000000, first 0.06152 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{7}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set title 'random normal a, b + matmul'
set arrow 1 from first 1000, graph 0.9 to first 1000, first 0.016096 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{3}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 1000, graph 0.82 to first 1000, first 0.030064 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{3}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_generate_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_generate_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_generate_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set title 'with host <-> device copies'
plot $cpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu (no copies)', \
     $gpu_copies_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_copies_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
unset multiplot
set output
set terminal svg size 800,560 dynamic font ',10'
set output 'matmul_sweep_square.svg'
set logscale x 2
set format x '%g'
set xlabel 'n (n x n @ n x n)'
set ylabel 'GFLOP/s'
set key top left
set title 'square matmul, FP32'
set arrow 1 from first 128, graph 0.9 to first 128, first 292.898 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 128' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 64, graph 0.82 to first 64, first 29.5207 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 64' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set output
set logscale x 10
set format x '10^{%L}'
