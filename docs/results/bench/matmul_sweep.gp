# Seed 002 (apps/matmul_sweep): CPU vs GPU time of c = a . b, and square-GEMM GFLOP/s.
# CPU: Intel(R) Xeon(R) Processor, 16 threads
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# cpu: OpenBLAS + OpenMP, 16 threads (cblas_sdot for this shape, sgemm for the squares)
# gpu: NVIDIA H200 (compute capability 9.0, sm_90, 132 SMs, 143155 MiB, driver 13.0)
# cudnn: cuBLAS 13.1.0 on NVIDIA H200 (compute capability 9.0, sm_90, 132 SMs, 143155 MiB, driver 13.0)
# Run in this folder: gnuplot matmul_sweep.gp  -> matmul_sweep.png/.svg, matmul_sweep_square.png/.svg

$cpu_matmul << EOD
100 0.000887
1000 0.000486
10000 0.00127
100000 0.007664
1000000 0.015266
10000000 0.335257
EOD
$gpu_matmul << EOD
100 0.007104
1000 0.006624
10000 0.01328
100000 0.016096
1000000 0.014304
10000000 0.031552
EOD
$cudnn_matmul << EOD
100 0.018432
1000 0.020416
10000 0.021248
100000 0.014048
1000000 0.018368
10000000 0.049056
EOD
$cpu_generate_matmul << EOD
100 0.00764
1000 0.031718
10000 0.045392
100000 0.345819
1000000 3.22103
10000000 33.0838
EOD
$gpu_generate_matmul << EOD
100 0.016288
1000 0.015072
10000 0.020736
100000 0.022304
1000000 0.025664
10000000 0.088608
EOD
$cudnn_generate_matmul << EOD
100 0.023904
1000 0.028896
10000 0.03872
100000 0.025984
1000000 0.023296
10000000 0.118496
EOD
$gpu_copies_matmul << EOD
100 0.041664
1000 0.041792
10000 0.052576
100000 0.110976
1000000 1.00576
10000000 14.6528
EOD
$cudnn_copies_matmul << EOD
100 0.049216
1000 0.04944
10000 0.063712
100000 0.121632
1000000 0.97616
10000000 12.8936
EOD
$cpu_square << EOD
64 103.024
128 103.614
256 375.3
512 418.438
1024 993.896
2048 998.928
EOD
$gpu_square << EOD
64 43.6907
128 502.192
256 2796.2
512 8895.66
1024 23638.2
2048 42134
EOD
$cudnn_square << EOD
64 28.8959
128 297.891
256 1232.17
512 10356.3
1024 31971.8
2048 48842
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
set arrow 1 from first 1000000, graph 0.9 to first 1000000, first 0.014304 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{6}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 10000000, graph 0.82 to first 10000000, first 0.049056 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{7}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set title 'random normal a, b + matmul'
set arrow 1 from first 1000, graph 0.9 to first 1000, first 0.015072 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{3}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 1000, graph 0.82 to first 1000, first 0.028896 lw 1.5 lc rgb '#2ca02c'
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
set arrow 1 from first 128, graph 0.9 to first 128, first 502.192 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 128' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 128, graph 0.82 to first 128, first 297.891 lw 1.5 lc rgb '#2ca02c'
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
set arrow 1 from first 1000000, graph 0.9 to first 1000000, first 0.014304 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{6}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 10000000, graph 0.82 to first 10000000, first 0.049056 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{7}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set title 'random normal a, b + matmul'
set arrow 1 from first 1000, graph 0.9 to first 1000, first 0.015072 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{3}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 1000, graph 0.82 to first 1000, first 0.028896 lw 1.5 lc rgb '#2ca02c'
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
set arrow 1 from first 128, graph 0.9 to first 128, first 502.192 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 128' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 128, graph 0.82 to first 128, first 297.891 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 128' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set output
set logscale x 10
set format x '10^{%L}'
