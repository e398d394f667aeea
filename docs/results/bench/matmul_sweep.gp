# Seed 002 (apps/matmul_sweep): CPU vs GPU time of c = a . b, and square-GEMM GFLOP/s.
# CPU: Intel(R) Xeon(R) Processor, 32 threads
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# cpu: OpenBLAS + OpenMP, 32 threads (cblas_sdot for this shape, sgemm for the squares)
# gpu: NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0)
# cudnn: cuBLAS 13.1.0 on NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0)
# Run in this folder: gnuplot matmul_sweep.gp  -> matmul_sweep.png/.svg, matmul_sweep_square.png/.svg

$cpu_matmul << EOD
100 0.000877
1000 0.000964
10000 0.001915
100000 0.010263
1000000 4.06499
10000000 0.307526
EOD
$gpu_matmul << EOD
100 0.00944
1000 0.009536
10000 0.018368
100000 0.014592
1000000 0.016032
10000000 0.039968
EOD
$cudnn_matmul << EOD
100 0.021824
1000 0.026944
10000 0.02928
100000 0.020832
1000000 0.021792
10000000 0.163776
EOD
$cpu_generate_matmul << EOD
100 0.006545
1000 0.039246
10000 0.033942
100000 0.187199
1000000 1.93106
10000000 18.4473
EOD
$gpu_generate_matmul << EOD
100 0.022944
1000 0.022528
10000 0.027328
100000 0.02624
1000000 0.027232
10000000 0.100288
EOD
$cudnn_generate_matmul << EOD
100 0.032736
1000 0.035552
10000 0.036928
100000 0.028192
1000000 0.033888
10000000 0.122944
EOD
$gpu_copies_matmul << EOD
100 0.03968
1000 0.044992
10000 0.060896
100000 0.134016
1000000 1.02861
10000000 13.9386
EOD
$cudnn_copies_matmul << EOD
100 0.060832
1000 0.063168
10000 0.071648
100000 0.149344
1000000 1.15363
10000000 13.6585
EOD
$cpu_square << EOD
64 27.2967
128 106.231
256 5.0526
512 295.847
1024 741.897
2048 814.813
EOD
$gpu_square << EOD
64 27.629
128 367.148
256 1579.18
512 8586.09
1024 23382.9
2048 42015.3
EOD
$cudnn_square << EOD
64 24.9376
128 214.52
256 555.39
512 7825.19
1024 29773.2
2048 48519.7
EOD

reset
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
set arrow 1 from first 1000000, graph 0.9 to first 1000000, first 0.016032 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{6}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 1000000, graph 0.82 to first 1000000, first 0.021792 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{6}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set title 'random normal a, b + matmul'
set arrow 1 from first 1000, graph 0.9 to first 1000, first 0.022528 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{3}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 100000, graph 0.82 to first 100000, first 0.028192 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{5}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
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
set arrow 1 from first 64, graph 0.9 to first 64, first 27.629 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 64' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 128, graph 0.82 to first 128, first 214.52 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 128' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
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
set arrow 1 from first 1000000, graph 0.9 to first 1000000, first 0.016032 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{6}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 1000000, graph 0.82 to first 1000000, first 0.021792 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{6}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set title 'random normal a, b + matmul'
set arrow 1 from first 1000, graph 0.9 to first 1000, first 0.022528 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{3}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 100000, graph 0.82 to first 100000, first 0.028192 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{5}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
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
set arrow 1 from first 64, graph 0.9 to first 64, first 27.629 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 64' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 128, graph 0.82 to first 128, first 214.52 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 128' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set output
set logscale x 10
set format x '10^{%L}'
