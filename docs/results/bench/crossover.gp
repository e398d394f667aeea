# apps/crossover: time per step of each workload, CPU and GPU variants, log-log; a
# dashed line where a GPU curve crosses below the CPU's for good.
# CPU: Intel(R) Xeon(R) Processor, 16 threads (16 hardware)
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# gpu: NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0)
# cudnn: NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0) + cuBLAS 13.1.0 + cuDNN 9.19.0
# Run in this folder: gnuplot crossover.gp  -> crossover.png, crossover.svg

$matmul_cpu_cpu << EOD
16 0.000233619
32 0.000761683
64 0.00422916
128 0.0312841
EOD
$matmul_cudnn_copies << EOD
16 0.0337389
32 0.0422326
64 0.0557145
128 0.0688633
EOD
$matmul_cudnn_graph << EOD
16 0.0029841
32 0.00629009
64 0.00406982
128 0.00518745
EOD
$matmul_cudnn_resident << EOD
16 0.008464
32 0.0131392
64 0.0129024
128 0.0145157
EOD
$matmul_gpu_copies << EOD
16 0.0338829
32 0.033459
64 0.0465012
128 0.0607954
EOD
$matmul_gpu_graph << EOD
16 0.00279612
32 0.00277634
64 0.00423307
128 0.0043937
EOD
$matmul_gpu_resident << EOD
16 0.00493847
32 0.00447078
64 0.00498702
128 0.00505461
EOD
$dense_cpu_cpu << EOD
16 0.00403603
32 0.00629741
64 0.016394
128 0.0537246
EOD
$dense_cudnn_copies << EOD
16 0.0607967
32 0.0671915
64 0.0662059
128 0.465988
EOD
$dense_cudnn_graph << EOD
16 0.0168225
32 0.0174745
64 0.0181389
128 0.0245696
EOD
$dense_cudnn_resident << EOD
16 0.0470458
32 0.0463651
64 0.0430263
128 0.39048
EOD
$dense_gpu_copies << EOD
16 0.039197
32 0.0378676
64 0.0456742
128 0.21691
EOD
$dense_gpu_graph << EOD
16 0.00977093
32 0.00992156
64 0.012956
128 0.0175098
EOD
$dense_gpu_resident << EOD
16 0.022333
32 0.022272
64 0.028168
128 0.180629
EOD
$conv_cpu_cpu << EOD
4 1.22859
8 0.815148
EOD
$conv_cudnn_copies << EOD
4 0.246367
8 0.300851
EOD
$conv_cudnn_graph << EOD
4 0.0533298
8 0.0783771
EOD
$conv_cudnn_resident << EOD
4 0.117882
8 0.10727
EOD
$conv_gpu_copies << EOD
4 0.183681
8 0.163918
EOD
$conv_gpu_graph << EOD
4 0.0448064
8 0.0457222
EOD
$conv_gpu_resident << EOD
4 0.239499
8 0.0537778
EOD
$mlp_step_cpu_cpu << EOD
1 0.111008
2 0.124683
4 0.156357
8 0.28283
16 0.209663
32 0.239789
64 0.266785
EOD
$mlp_step_cudnn_copies << EOD
1 0.130301
2 0.196431
4 0.196693
8 0.223685
16 0.317853
32 0.16547
64 0.190053
EOD
$mlp_step_cudnn_graph << EOD
1 0.0396562
2 0.0456162
4 0.0464094
8 0.094386
16 0.0957212
32 0.0538922
64 0.0571607
EOD
$mlp_step_cudnn_resident << EOD
1 0.118604
2 0.176232
4 0.167935
8 0.1881
16 0.244127
32 0.132044
64 0.162028
EOD
$mlp_step_gpu_copies << EOD
1 0.141045
2 0.143341
4 0.153084
8 0.209018
16 0.126816
32 0.160398
64 0.147977
EOD
$mlp_step_gpu_graph << EOD
1 0.0415101
2 0.0417565
4 0.041844
8 0.0425968
16 0.0438995
32 0.0431581
64 0.0476168
EOD
$mlp_step_gpu_resident << EOD
1 0.0978338
2 0.131142
4 0.133223
8 0.144281
16 0.710313
32 0.128159
64 0.105716
EOD

reset
set logscale x 2
set logscale y 10
set format x '%g'
set format y '%g'
set grid
set key top left
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1400,1760 font ',10' } else { set terminal png size 1400,1760 }
set termoption noenhanced
set output 'crossover.png'
set multiplot layout 4,2 title 'CPU vs GPU, median time per step (log-log)'
set title 'matmul: cpu vs gpu'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 67.7867, graph 0 to 67.7867, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'gpu resident overtakes cpu at ~67.8' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 64.0209, graph 0 to 64.0209, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'gpu graph overtakes cpu at ~64' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $matmul_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $matmul_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'matmul: cpu vs cudnn'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 96.4873, graph 0 to 96.4873, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'cudnn resident overtakes cpu at ~96.5' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 63.2123, graph 0 to 63.2123, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn graph overtakes cpu at ~63.2' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $matmul_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $matmul_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'dense: cpu vs gpu'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 50.523, graph 0 to 50.523, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 1 'gpu graph overtakes cpu at ~50.5' at graph 0.98, graph 0.06 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $dense_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $dense_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'dense: cpu vs cudnn'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 69.2854, graph 0 to 69.2854, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 1 'cudnn graph overtakes cpu at ~69.3' at graph 0.98, graph 0.06 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $dense_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $dense_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'conv: cpu vs gpu'
set xlabel 'channels'
set ylabel 'ms per step'
plot $conv_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $conv_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $conv_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $conv_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'conv: cpu vs cudnn'
set xlabel 'channels'
set ylabel 'ms per step'
plot $conv_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $conv_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $conv_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $conv_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'mlp_step: cpu vs gpu'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 3.65094, graph 0 to 3.65094, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~3.65' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 25.2945, graph 0 to 25.2945, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~25.3' at graph 0.98, graph 0.12 right tc rgb '#d62728'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $mlp_step_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $mlp_step_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'mlp_step: cpu vs cudnn'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 23.0815, graph 0 to 23.0815, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~23.1' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 18.4205, graph 0 to 18.4205, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'cudnn resident overtakes cpu at ~18.4' at graph 0.98, graph 0.12 right tc rgb '#d62728'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $mlp_step_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $mlp_step_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
unset multiplot
set output
set terminal svg size 1400,1760 dynamic font ',10'
set termoption noenhanced
set output 'crossover.svg'
set multiplot layout 4,2 title 'CPU vs GPU, median time per step (log-log)'
set title 'matmul: cpu vs gpu'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 67.7867, graph 0 to 67.7867, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'gpu resident overtakes cpu at ~67.8' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 64.0209, graph 0 to 64.0209, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'gpu graph overtakes cpu at ~64' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $matmul_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $matmul_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'matmul: cpu vs cudnn'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 96.4873, graph 0 to 96.4873, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'cudnn resident overtakes cpu at ~96.5' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 63.2123, graph 0 to 63.2123, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn graph overtakes cpu at ~63.2' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $matmul_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $matmul_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'dense: cpu vs gpu'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 50.523, graph 0 to 50.523, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 1 'gpu graph overtakes cpu at ~50.5' at graph 0.98, graph 0.06 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $dense_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $dense_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'dense: cpu vs cudnn'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 69.2854, graph 0 to 69.2854, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 1 'cudnn graph overtakes cpu at ~69.3' at graph 0.98, graph 0.06 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $dense_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $dense_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'conv: cpu vs gpu'
set xlabel 'channels'
set ylabel 'ms per step'
plot $conv_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $conv_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $conv_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $conv_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'conv: cpu vs cudnn'
set xlabel 'channels'
set ylabel 'ms per step'
plot $conv_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $conv_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $conv_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $conv_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'mlp_step: cpu vs gpu'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 3.65094, graph 0 to 3.65094, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~3.65' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 25.2945, graph 0 to 25.2945, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~25.3' at graph 0.98, graph 0.12 right tc rgb '#d62728'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $mlp_step_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $mlp_step_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'mlp_step: cpu vs cudnn'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 23.0815, graph 0 to 23.0815, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~23.1' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 18.4205, graph 0 to 18.4205, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'cudnn resident overtakes cpu at ~18.4' at graph 0.98, graph 0.12 right tc rgb '#d62728'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $mlp_step_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $mlp_step_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
unset multiplot
set output
