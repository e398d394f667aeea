# apps/crossover: time per step of each workload, CPU and GPU variants, log-log; a
# dashed line where a GPU curve crosses below the CPU's for good.
# CPU: Intel(R) Xeon(R) Processor, 16 threads (16 hardware)
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# gpu: NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0)
# cudnn: NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0) + cuBLAS 13.1.0 + cuDNN 9.19.0
# Run in this folder: gnuplot crossover.gp  -> crossover.png, crossover.svg

$matmul_cpu_cpu << EOD
16 0.000291571
32 0.00080166
64 0.00460821
128 5.00675
EOD
$matmul_cudnn_copies << EOD
16 0.0367458
32 0.0421458
64 0.0567416
128 0.073168
EOD
$matmul_cudnn_graph << EOD
16 0.003104
32 0.00637456
64 0.00418918
128 0.00528
EOD
$matmul_cudnn_resident << EOD
16 0.00863228
32 0.0147623
64 0.0138027
128 0.0137126
EOD
$matmul_gpu_copies << EOD
16 0.0333242
32 0.0348067
64 0.0467606
128 0.0623815
EOD
$matmul_gpu_graph << EOD
16 0.00291911
32 0.00289422
64 0.00441159
128 0.0044655
EOD
$matmul_gpu_resident << EOD
16 0.00509572
32 0.00477968
64 0.00574979
128 0.00555159
EOD
$dense_cpu_cpu << EOD
16 0.00603041
32 0.00907854
64 0.0189525
128 0.0472659
EOD
$dense_cudnn_copies << EOD
16 0.073619
32 0.0705017
64 0.065372
128 0.063715
EOD
$dense_cudnn_graph << EOD
16 0.016969
32 0.0175827
64 0.0182827
128 0.0222507
EOD
$dense_cudnn_resident << EOD
16 0.0545952
32 0.0524389
64 0.0487147
128 0.0457467
EOD
$dense_gpu_copies << EOD
16 0.0400796
32 0.0419607
64 0.0453087
128 0.0438476
EOD
$dense_gpu_graph << EOD
16 0.00991508
32 0.0101406
64 0.0139422
128 0.015656
EOD
$dense_gpu_resident << EOD
16 0.0232124
32 0.0251638
64 0.0219243
128 0.0299253
EOD
$conv_cpu_cpu << EOD
4 0.46997
8 0.770368
EOD
$conv_cudnn_copies << EOD
4 0.265205
8 0.2954
EOD
$conv_cudnn_graph << EOD
4 0.053408
8 0.0777463
EOD
$conv_cudnn_resident << EOD
4 0.103128
8 0.10375
EOD
$conv_gpu_copies << EOD
4 0.121175
8 0.178906
EOD
$conv_gpu_graph << EOD
4 0.0399467
8 0.0458036
EOD
$conv_gpu_resident << EOD
4 0.0469084
8 0.0549867
EOD
$mlp_step_cpu_cpu << EOD
1 0.118831
2 0.144461
4 0.15932
8 0.199238
16 0.282498
32 0.240411
64 0.339967
EOD
$mlp_step_cudnn_copies << EOD
1 0.159445
2 0.215951
4 0.228752
8 0.239437
16 0.232699
32 0.246656
64 0.265232
EOD
$mlp_step_cudnn_graph << EOD
1 0.0397564
2 0.0456595
4 0.0460349
8 0.095199
16 0.0959093
32 0.0541699
64 0.0572101
EOD
$mlp_step_cudnn_resident << EOD
1 0.114855
2 0.190075
4 0.194442
8 0.198772
16 0.20388
32 0.184143
64 0.204012
EOD
$mlp_step_gpu_copies << EOD
1 0.132227
2 0.15107
4 0.162166
8 0.171718
16 0.179117
32 0.176051
64 0.187319
EOD
$mlp_step_gpu_graph << EOD
1 0.0415016
2 0.0418172
4 0.0418929
8 0.0424873
16 0.0428765
32 0.043185
64 0.0477233
EOD
$mlp_step_gpu_resident << EOD
1 0.101596
2 0.132857
4 0.128643
8 0.138561
16 0.13336
32 0.134833
64 0.1387
EOD

set logscale x 2
set logscale y 10
set format x '%g'
set format y '%g'
set grid
set key top left
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1400,1040 font ',10' } else { set terminal png size 1400,1040 }
set termoption noenhanced
set output 'crossover.png'
set multiplot layout 2,2 title 'CPU vs GPU, median time per step (log-log)'
set title 'matmul'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 81.3304, graph 0 to 81.3304, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~81.3' at graph 0.98, graph 0.04 right tc rgb '#ff7f0e'
set arrow 2 from 65.4128, graph 0 to 65.4128, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~65.4' at graph 0.98, graph 0.08 right tc rgb '#d62728'
set arrow 3 from 62.5592, graph 0 to 62.5592, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~62.6' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
set arrow 4 from 82.8655, graph 0 to 82.8655, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 4 'cudnn copies overtakes cpu at ~82.9' at graph 0.98, graph 0.16 right tc rgb '#ff7f0e'
set arrow 5 from 71.3469, graph 0 to 71.3469, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 5 'cudnn resident overtakes cpu at ~71.3' at graph 0.98, graph 0.2 right tc rgb '#d62728'
set arrow 6 from 62.0793, graph 0 to 62.0793, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 6 'cudnn graph overtakes cpu at ~62.1' at graph 0.98, graph 0.24 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $matmul_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $matmul_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph', \
     $matmul_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' dt 2 title 'cudnn copies', \
     $matmul_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' dt 2 title 'cudnn resident', \
     $matmul_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' dt 2 title 'cudnn graph'
unset arrow
unset label
set title 'dense'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 121.154, graph 0 to 121.154, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~121' at graph 0.98, graph 0.04 right tc rgb '#ff7f0e'
set arrow 2 from 75.6705, graph 0 to 75.6705, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~75.7' at graph 0.98, graph 0.08 right tc rgb '#d62728'
set arrow 3 from 38.4497, graph 0 to 38.4497, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~38.4' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
set arrow 4 from 125.066, graph 0 to 125.066, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 4 'cudnn resident overtakes cpu at ~125' at graph 0.98, graph 0.16 right tc rgb '#d62728'
set arrow 5 from 61.7503, graph 0 to 61.7503, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 5 'cudnn graph overtakes cpu at ~61.8' at graph 0.98, graph 0.2 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $dense_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $dense_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph', \
     $dense_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' dt 2 title 'cudnn copies', \
     $dense_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' dt 2 title 'cudnn resident', \
     $dense_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' dt 2 title 'cudnn graph'
unset arrow
unset label
set title 'conv'
set xlabel 'channels'
set ylabel 'ms per step'
plot $conv_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $conv_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $conv_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $conv_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph', \
     $conv_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' dt 2 title 'cudnn copies', \
     $conv_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' dt 2 title 'cudnn resident', \
     $conv_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' dt 2 title 'cudnn graph'
unset arrow
unset label
set title 'mlp_step'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 4.3063, graph 0 to 4.3063, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~4.31' at graph 0.98, graph 0.04 right tc rgb '#ff7f0e'
set arrow 2 from 34.1456, graph 0 to 34.1456, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 2 'cudnn copies overtakes cpu at ~34.1' at graph 0.98, graph 0.08 right tc rgb '#ff7f0e'
set arrow 3 from 7.93588, graph 0 to 7.93588, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 3 'cudnn resident overtakes cpu at ~7.94' at graph 0.98, graph 0.12 right tc rgb '#d62728'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $mlp_step_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $mlp_step_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph', \
     $mlp_step_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' dt 2 title 'cudnn copies', \
     $mlp_step_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' dt 2 title 'cudnn resident', \
     $mlp_step_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' dt 2 title 'cudnn graph'
unset arrow
unset label
unset multiplot
set output
set terminal svg size 1400,1040 dynamic font ',10'
set termoption noenhanced
set output 'crossover.svg'
set multiplot layout 2,2 title 'CPU vs GPU, median time per step (log-log)'
set title 'matmul'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 81.3304, graph 0 to 81.3304, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~81.3' at graph 0.98, graph 0.04 right tc rgb '#ff7f0e'
set arrow 2 from 65.4128, graph 0 to 65.4128, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~65.4' at graph 0.98, graph 0.08 right tc rgb '#d62728'
set arrow 3 from 62.5592, graph 0 to 62.5592, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~62.6' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
set arrow 4 from 82.8655, graph 0 to 82.8655, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 4 'cudnn copies overtakes cpu at ~82.9' at graph 0.98, graph 0.16 right tc rgb '#ff7f0e'
set arrow 5 from 71.3469, graph 0 to 71.3469, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 5 'cudnn resident overtakes cpu at ~71.3' at graph 0.98, graph 0.2 right tc rgb '#d62728'
set arrow 6 from 62.0793, graph 0 to 62.0793, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 6 'cudnn graph overtakes cpu at ~62.1' at graph 0.98, graph 0.24 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $matmul_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $matmul_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph', \
     $matmul_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' dt 2 title 'cudnn copies', \
     $matmul_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' dt 2 title 'cudnn resident', \
     $matmul_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' dt 2 title 'cudnn graph'
unset arrow
unset label
set title 'dense'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 121.154, graph 0 to 121.154, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~121' at graph 0.98, graph 0.04 right tc rgb '#ff7f0e'
set arrow 2 from 75.6705, graph 0 to 75.6705, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~75.7' at graph 0.98, graph 0.08 right tc rgb '#d62728'
set arrow 3 from 38.4497, graph 0 to 38.4497, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~38.4' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
set arrow 4 from 125.066, graph 0 to 125.066, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 4 'cudnn resident overtakes cpu at ~125' at graph 0.98, graph 0.16 right tc rgb '#d62728'
set arrow 5 from 61.7503, graph 0 to 61.7503, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 5 'cudnn graph overtakes cpu at ~61.8' at graph 0.98, graph 0.2 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $dense_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $dense_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph', \
     $dense_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' dt 2 title 'cudnn copies', \
     $dense_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' dt 2 title 'cudnn resident', \
     $dense_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' dt 2 title 'cudnn graph'
unset arrow
unset label
set title 'conv'
set xlabel 'channels'
set ylabel 'ms per step'
plot $conv_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $conv_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $conv_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $conv_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph', \
     $conv_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' dt 2 title 'cudnn copies', \
     $conv_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' dt 2 title 'cudnn resident', \
     $conv_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' dt 2 title 'cudnn graph'
unset arrow
unset label
set title 'mlp_step'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 4.3063, graph 0 to 4.3063, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~4.31' at graph 0.98, graph 0.04 right tc rgb '#ff7f0e'
set arrow 2 from 34.1456, graph 0 to 34.1456, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 2 'cudnn copies overtakes cpu at ~34.1' at graph 0.98, graph 0.08 right tc rgb '#ff7f0e'
set arrow 3 from 7.93588, graph 0 to 7.93588, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 3 'cudnn resident overtakes cpu at ~7.94' at graph 0.98, graph 0.12 right tc rgb '#d62728'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $mlp_step_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $mlp_step_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph', \
     $mlp_step_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' dt 2 title 'cudnn copies', \
     $mlp_step_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' dt 2 title 'cudnn resident', \
     $mlp_step_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' dt 2 title 'cudnn graph'
unset arrow
unset label
unset multiplot
set output
