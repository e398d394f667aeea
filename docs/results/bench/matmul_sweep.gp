# Seed 002 (apps/matmul_sweep): CPU vs GPU time of c = a . b, and square-GEMM GFLOP/s.
# CPU: Intel(R) Xeon(R) Processor, 16 threads
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# cpu: OpenBLAS + OpenMP, 16 threads (cblas_sdot for this shape, sgemm for the squares)
# gpu: NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0)
# cudnn: cuBLAS 13.1.0 on NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0)
# Run in this folder: gnuplot matmul_sweep.gp  -> matmul_sweep.png/.svg, matmul_sweep_square.png/.svg

$cpu_matmul << EOD
100 0.000429
1000 0.000705
10000 0.001397
100000 0.006106
1000000 0.010045
10000000 0.466159
EOD
$gpu_matmul << EOD
100 0.005952
1000 0.00704
10000 0.012768
100000 0.011488
1000000 0.011168
10000000 0.037856
EOD
$cudnn_matmul << EOD
100 0.018592
1000 0.022496
10000 0.021216
100000 0.012832
1000000 0.014944
10000000 0.061504
EOD
$cpu_generate_matmul << EOD
100 0.003256
1000 0.033799
10000 0.035872
100000 0.273324
1000000 4.5509
10000000 26.9616
EOD
$gpu_generate_matmul << EOD
100 0.012896
1000 0.014144
10000 0.020224
100000 0.022176
1000000 0.020608
10000000 0.099264
EOD
$cudnn_generate_matmul << EOD
100 0.02656
1000 0.029696
10000 0.030112
100000 0.021952
1000000 0.023136
10000000 0.11952
EOD
$gpu_copies_matmul << EOD
100 0.040128
1000 0.03664
10000 0.04976
100000 0.111264
1000000 0.98912
10000000 10.0706
EOD
$cudnn_copies_matmul << EOD
100 0.04896
1000 0.052736
10000 0.060128
100000 0.110976
1000000 0.943072
10000000 9.8111
EOD
$cpu_square << EOD
64 113.091
128 152.965
256 346.723
512 684.797
1024 944.111
2048 1069.86
EOD
$gpu_square << EOD
64 54.2517
128 487.256
256 3246.37
512 9834.24
1024 23772.2
2048 42608.8
EOD
$cudnn_square << EOD
64 39.3846
128 279.471
256 1741.82
512 11538.7
1024 31040.2
2048 49431.1
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
set arrow 1 from first 10000000, graph 0.9 to first 10000000, first 0.037856 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{7}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 10000000, graph 0.82 to first 10000000, first 0.061504 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{7}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set title 'random normal a, b + matmul'
set arrow 1 from first 1000, graph 0.9 to first 1000, first 0.014144 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{3}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 1000, graph 0.82 to first 1000, first 0.029696 lw 1.5 lc rgb '#2ca02c'
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
set arrow 1 from first 128, graph 0.9 to first 128, first 487.256 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 128' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 128, graph 0.82 to first 128, first 279.471 lw 1.5 lc rgb '#2ca02c'
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
set arrow 1 from first 10000000, graph 0.9 to first 10000000, first 0.037856 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{7}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 10000000, graph 0.82 to first 10000000, first 0.061504 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 10^{7}' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_matmul using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set title 'random normal a, b + matmul'
set arrow 1 from first 1000, graph 0.9 to first 1000, first 0.014144 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 10^{3}' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 1000, graph 0.82 to first 1000, first 0.029696 lw 1.5 lc rgb '#2ca02c'
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
set arrow 1 from first 128, graph 0.9 to first 128, first 487.256 lw 1.5 lc rgb '#d62728'
set label 1 'gpu beats cpu from n = 128' at graph 0.97, graph 0.1 right tc rgb '#d62728'
set arrow 2 from first 128, graph 0.82 to first 128, first 279.471 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn beats cpu from n = 128' at graph 0.97, graph 0.17 right tc rgb '#2ca02c'
plot $cpu_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'cpu', \
     $gpu_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'gpu', \
     $cudnn_square using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'cudnn'
unset arrow
unset label
set output
set logscale x 10
set format x '10^{%L}'
