# Seed 002 (apps/matmul_sweep): CPU vs GPU time of c = a . b, and square-GEMM GFLOP/s.
# CPU: Intel(R) Xeon(R) Processor, 16 threads
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# cpu: OpenBLAS + OpenMP, 16 threads (cblas_sdot for this shape, sgemm for the squares)
# gpu: NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0)
# cudnn: cuBLAS 13.1.0 on NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0)
# Run in this folder: gnuplot matmul_sweep.gp  -> matmul_sweep.png/.svg, matmul_sweep_square.png/.svg

$cpu_matmul << EOD
100 0.000552
1000 0.000539
10000 0.001277
100000 0.005322
1000000 0.020529
10000000 0.463719
EOD
$gpu_matmul << EOD
100 0.008064
1000 0.006752
10000 0.010816
100000 0.012256
1000000 0.013696
10000000 0.036128
EOD
$cudnn_matmul << EOD
100 0.017184
1000 0.021568
10000 0.024832
100000 0.013824
1000000 0.014528
10000000 0.060512
EOD
$cpu_generate_matmul << EOD
100 0.004246
1000 0.022862
10000 0.033027
100000 0.260547
1000000 2.55979
10000000 25.6214
EOD
$gpu_generate_matmul << EOD
100 0.01552
1000 0.014208
10000 0.019744
100000 0.02128
1000000 0.021056
10000000 0.097536
EOD
$cudnn_generate_matmul << EOD
100 0.029504
1000 0.030976
10000 0.030688
100000 0.02112
1000000 0.022784
10000000 0.120768
EOD
$gpu_copies_matmul << EOD
100 0.036896
1000 0.039008
10000 0.05376
100000 0.114784
1000000 0.801728
10000000 9.44288
EOD
$cudnn_copies_matmul << EOD
100 0.052064
1000 0.05328
10000 0.060768
100000 0.111008
1000000 0.837856
10000000 9.48118
EOD
$cpu_square << EOD
64 102.002
128 137.437
256 381.274
512 603.58
1024 953.715
2048 1093.37
EOD
$gpu_square << EOD
64 48.3304
128 418.76
256 2904.64
512 9341.43
1024 23538.7
2048 42386.8
EOD
$cudnn_square << EOD
64 38.9169
128 267.494
256 1762.31
512 10713.4
1024 31850.4
2048 49335.7
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
set arrow 1 from first 1000000, graph 0.9 to first 1000000, first 0.013696 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{6}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 1000000, graph 0.82 to first 1000000, first 0.014528 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{6}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set title 'random normal a, b + matmul'
set arrow 1 from first 1000, graph 0.9 to first 1000, first 0.014208 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{3}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 10000, graph 0.82 to first 10000, first 0.030688 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{4}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
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
set arrow 1 from first 128, graph 0.9 to first 128, first 418.76 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 128' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 128, graph 0.82 to first 128, first 267.494 lw 1.5 lc rgb '#2ca02c'
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
set arrow 1 from first 1000000, graph 0.9 to first 1000000, first 0.013696 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{6}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 1000000, graph 0.82 to first 1000000, first 0.014528 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{6}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set title 'random normal a, b + matmul'
set arrow 1 from first 1000, graph 0.9 to first 1000, first 0.014208 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{3}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 10000, graph 0.82 to first 10000, first 0.030688 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{4}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
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
set arrow 1 from first 128, graph 0.9 to first 128, first 418.76 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 128' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 128, graph 0.82 to first 128, first 267.494 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 128' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set output
set logscale x 10
set format x '10^{%L}'
