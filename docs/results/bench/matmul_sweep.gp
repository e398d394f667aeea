# Seed 002 (apps/matmul_sweep): CPU vs GPU time of c = a . b, and square-GEMM GFLOP/s.
# CPU: Intel(R) Xeon(R) Processor, 16 threads
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# cpu: OpenBLAS + OpenMP, 16 threads (cblas_sdot for this shape, sgemm for the squares)
# gpu: NVIDIA H200 (compute capability 9.0, sm_90, 132 SMs, 143155 MiB, driver 13.0)
# cudnn: cuBLAS 13.1.0 on NVIDIA H200 (compute capability 9.0, sm_90, 132 SMs, 143155 MiB, driver 13.0)
# Run in this folder: gnuplot matmul_sweep.gp  -> matmul_sweep.png/.svg, matmul_sweep_square.png/.svg

$cpu_matmul << EOD
100 0.000622
1000 0.000686
10000 0.001385
100000 0.00718
1000000 0.01305
10000000 0.45067
EOD
$gpu_matmul << EOD
100 0.006976
1000 0.006336
10000 0.013792
100000 0.01216
1000000 0.014336
10000000 0.031872
EOD
$cudnn_matmul << EOD
100 0.016256
1000 0.019296
10000 0.022144
100000 0.016512
1000000 0.017152
10000000 0.049376
EOD
$cpu_generate_matmul << EOD
100 0.005888
1000 0.032082
10000 0.035952
100000 0.369387
1000000 3.25974
10000000 32.5829
EOD
$gpu_generate_matmul << EOD
100 0.015264
1000 0.015328
10000 0.021248
100000 0.021024
1000000 0.021408
10000000 0.08864
EOD
$cudnn_generate_matmul << EOD
100 0.023552
1000 0.030272
10000 0.03136
100000 0.024256
1000000 0.026496
10000000 0.115648
EOD
$gpu_copies_matmul << EOD
100 0.039872
1000 0.04048
10000 0.051648
100000 0.109504
1000000 0.959776
10000000 11.3411
EOD
$cudnn_copies_matmul << EOD
100 0.045952
1000 0.047776
10000 0.060928
100000 0.14272
1000000 0.965888
10000000 11.4538
EOD
$cpu_square << EOD
64 99.4854
128 112.914
256 361.535
512 647.585
1024 951.926
2048 1012.61
EOD
$gpu_square << EOD
64 52.0127
128 412.176
256 2937.19
512 9731.56
1024 23713.4
2048 42457.2
EOD
$cudnn_square << EOD
64 31.0892
128 249.186
256 1588.75
512 10082.5
1024 30080.2
2048 48709
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
set arrow 1 from first 10000000, graph 0.9 to first 10000000, first 0.031872 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{7}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 10000000, graph 0.82 to first 10000000, first 0.049376 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{7}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set title 'random normal a, b + matmul'
set arrow 1 from first 1000, graph 0.9 to first 1000, first 0.015328 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{3}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 1000, graph 0.82 to first 1000, first 0.030272 lw 1.5 lc rgb '#2ca02c'
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
set arrow 1 from first 128, graph 0.9 to first 128, first 412.176 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 128' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 128, graph 0.82 to first 128, first 249.186 lw 1.5 lc rgb '#2ca02c'
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
set arrow 1 from first 10000000, graph 0.9 to first 10000000, first 0.031872 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{7}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 10000000, graph 0.82 to first 10000000, first 0.049376 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{7}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set title 'random normal a, b + matmul'
set arrow 1 from first 1000, graph 0.9 to first 1000, first 0.015328 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{3}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 1000, graph 0.82 to first 1000, first 0.030272 lw 1.5 lc rgb '#2ca02c'
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
set arrow 1 from first 128, graph 0.9 to first 128, first 412.176 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 128' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 128, graph 0.82 to first 128, first 249.186 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 128' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set output
set logscale x 10
set format x '10^{%L}'
