# apps/crossover: time per step of each workload, CPU and GPU variants, log-log; a
# dashed line where a GPU curve crosses below the CPU's for good.
# CPU: Intel(R) Xeon(R) Processor, 16 threads (16 hardware)
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# gpu: NVIDIA H200 (compute capability 9.0, sm_90, 132 SMs, 143155 MiB, driver 13.0)
# cudnn: NVIDIA H200 (compute capability 9.0, sm_90, 132 SMs, 143155 MiB, driver 13.0) + cuBLAS 13.1.0 + cuDNN 9.19.0
# Run in this folder: gnuplot crossover.gp  -> crossover.png, crossover.svg

$matmul_cpu_cpu << EOD
16 0.000139866
32 0.000474327
64 0.00314957
128 0.023622
EOD
$matmul_cudnn_copies << EOD
16 0.0368654
32 0.0382581
64 0.0474488
128 0.0656355
EOD
$matmul_cudnn_graph << EOD
16 0.00266279
32 0.00597426
64 0.00383488
128 0.00499742
EOD
$matmul_cudnn_resident << EOD
16 0.00669616
32 0.0111188
64 0.00951378
128 0.0128256
EOD
$matmul_gpu_copies << EOD
16 0.03495
32 0.0358659
64 0.0442002
128 0.054036
EOD
$matmul_gpu_graph << EOD
16 0.00246844
32 0.00254876
64 0.00383631
128 0.00415443
EOD
$matmul_gpu_resident << EOD
16 0.00393527
32 0.00398012
64 0.00463275
128 0.00459757
EOD
$dense_cpu_cpu << EOD
16 0.00441969
32 0.00751779
64 0.0176697
128 0.0485916
EOD
$dense_cudnn_copies << EOD
16 0.0699607
32 0.0690291
64 0.0708155
128 0.060824
EOD
$dense_cudnn_graph << EOD
16 0.0163114
32 0.0169395
64 0.017816
128 0.021661
EOD
$dense_cudnn_resident << EOD
16 0.0537536
32 0.0524693
64 0.0509248
128 0.0446351
EOD
$dense_gpu_copies << EOD
16 0.0408459
32 0.0424113
64 0.0415481
128 0.0467716
EOD
$dense_gpu_graph << EOD
16 0.00947774
32 0.00973292
64 0.012377
128 0.013012
EOD
$dense_gpu_resident << EOD
16 0.0229384
32 0.0224592
64 0.0243652
128 0.0251769
EOD
$conv_cpu_cpu << EOD
4 0.438359
8 0.762381
EOD
$conv_cudnn_copies << EOD
4 0.179726
8 0.28379
EOD
$conv_cudnn_graph << EOD
4 0.053472
8 0.078432
EOD
$conv_cudnn_resident << EOD
4 0.098888
8 0.107104
EOD
$conv_gpu_copies << EOD
4 0.105576
8 0.170603
EOD
$conv_gpu_graph << EOD
4 0.0381686
8 0.047136
EOD
$conv_gpu_resident << EOD
4 0.043968
8 0.0523484
EOD
$mlp_step_cpu_cpu << EOD
1 0.130184
2 0.121177
4 0.129669
8 0.144597
16 0.208745
32 0.265137
64 0.257342
EOD
$mlp_step_cudnn_copies << EOD
1 0.140193
2 0.148001
4 0.163784
8 0.173403
16 0.157264
32 0.169086
64 0.172022
EOD
$mlp_step_cudnn_graph << EOD
1 0.0388658
2 0.0446521
4 0.0448594
8 0.0932207
16 0.0942243
32 0.0531112
64 0.0563344
EOD
$mlp_step_cudnn_resident << EOD
1 0.116873
2 0.126326
4 0.154704
8 0.136706
16 0.136073
32 0.139135
64 0.144692
EOD
$mlp_step_gpu_copies << EOD
1 0.125866
2 0.127902
4 0.122085
8 0.135715
16 0.141016
32 0.134997
64 0.141372
EOD
$mlp_step_gpu_graph << EOD
1 0.0408698
2 0.040944
4 0.0409643
8 0.0415588
16 0.042235
32 0.042443
64 0.046982
EOD
$mlp_step_gpu_resident << EOD
1 0.10707
2 0.104122
4 0.106766
8 0.105862
16 0.109509
32 0.10616
64 0.102257
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
set arrow 1 from 73.049, graph 0 to 73.049, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'gpu resident overtakes cpu at ~73' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 68.685, graph 0 to 68.685, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'gpu graph overtakes cpu at ~68.7' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $matmul_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $matmul_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'matmul: cpu vs cudnn'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 100.019, graph 0 to 100.019, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'cudnn resident overtakes cpu at ~100' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 69.19, graph 0 to 69.19, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn graph overtakes cpu at ~69.2' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $matmul_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $matmul_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'dense: cpu vs gpu'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 124.264, graph 0 to 124.264, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~124' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 80.3516, graph 0 to 80.3516, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~80.4' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 42.8261, graph 0 to 42.8261, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~42.8' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $dense_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $dense_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'dense: cpu vs cudnn'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 121.577, graph 0 to 121.577, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'cudnn resident overtakes cpu at ~122' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 64.4498, graph 0 to 64.4498, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn graph overtakes cpu at ~64.4' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
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
set arrow 1 from 2.77523, graph 0 to 2.77523, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~2.78' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $mlp_step_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $mlp_step_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'mlp_step: cpu vs cudnn'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 10.489, graph 0 to 10.489, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~10.5' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 6.76825, graph 0 to 6.76825, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'cudnn resident overtakes cpu at ~6.77' at graph 0.98, graph 0.12 right tc rgb '#d62728'
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
set arrow 1 from 73.049, graph 0 to 73.049, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'gpu resident overtakes cpu at ~73' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 68.685, graph 0 to 68.685, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'gpu graph overtakes cpu at ~68.7' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $matmul_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $matmul_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'matmul: cpu vs cudnn'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 100.019, graph 0 to 100.019, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'cudnn resident overtakes cpu at ~100' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 69.19, graph 0 to 69.19, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn graph overtakes cpu at ~69.2' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $matmul_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $matmul_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'dense: cpu vs gpu'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 124.264, graph 0 to 124.264, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~124' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 80.3516, graph 0 to 80.3516, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~80.4' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 42.8261, graph 0 to 42.8261, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~42.8' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $dense_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $dense_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'dense: cpu vs cudnn'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 121.577, graph 0 to 121.577, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'cudnn resident overtakes cpu at ~122' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 64.4498, graph 0 to 64.4498, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn graph overtakes cpu at ~64.4' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
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
set arrow 1 from 2.77523, graph 0 to 2.77523, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~2.78' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $mlp_step_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $mlp_step_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'mlp_step: cpu vs cudnn'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 10.489, graph 0 to 10.489, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~10.5' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 6.76825, graph 0 to 6.76825, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'cudnn resident overtakes cpu at ~6.77' at graph 0.98, graph 0.12 right tc rgb '#d62728'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $mlp_step_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $mlp_step_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
unset multiplot
set output
