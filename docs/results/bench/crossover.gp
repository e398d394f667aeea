# apps/crossover: time per step of each workload, CPU and GPU variants, log-log; a
# dashed line where a GPU curve crosses below the CPU's for good.
# CPU: Intel(R) Xeon(R) Processor, 16 threads (16 hardware)
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# gpu: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 81079 MiB, driver 13.0)
# cudnn: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 81079 MiB, driver 13.0) + cuBLAS 13.1.0 + cuDNN 9.19.0
# Run in this folder: gnuplot crossover.gp  -> crossover.png, crossover.svg

$matmul_cpu_cpu << EOD
16 0.000240643
32 0.000743135
64 0.00448784
128 0.0380841
EOD
$matmul_cudnn_copies << EOD
16 0.0361326
32 0.043541
64 0.0566102
128 0.0671081
EOD
$matmul_cudnn_graph << EOD
16 0.00302218
32 0.00624873
64 0.00412522
128 0.0054025
EOD
$matmul_cudnn_resident << EOD
16 0.0085624
32 0.0149308
64 0.0127581
128 0.00927224
EOD
$matmul_gpu_copies << EOD
16 0.0312055
32 0.0324162
64 0.046875
128 0.0607881
EOD
$matmul_gpu_graph << EOD
16 0.00285737
32 0.00282479
64 0.00431952
128 0.00451689
EOD
$matmul_gpu_resident << EOD
16 0.0043007
32 0.0043136
64 0.00511256
128 0.00499064
EOD
$dense_cpu_cpu << EOD
16 0.0055282
32 0.00701928
64 0.0187941
128 0.044287
EOD
$dense_cudnn_copies << EOD
16 0.0577981
32 0.0680399
64 0.0575037
128 0.0736655
EOD
$dense_cudnn_graph << EOD
16 0.0171188
32 0.0174118
64 0.0184627
128 0.0221376
EOD
$dense_cudnn_resident << EOD
16 0.0403471
32 0.0508352
64 0.0374427
128 0.0518848
EOD
$dense_gpu_copies << EOD
16 0.0335746
32 0.0348241
64 0.0412905
128 0.0404732
EOD
$dense_gpu_graph << EOD
16 0.0100396
32 0.0101554
64 0.0130201
128 0.0134503
EOD
$dense_gpu_resident << EOD
16 0.0189325
32 0.0174535
64 0.0190857
128 0.0185061
EOD
$conv_cpu_cpu << EOD
4 0.444378
8 0.922868
EOD
$conv_cudnn_copies << EOD
4 0.187807
8 0.2876
EOD
$conv_cudnn_graph << EOD
4 0.0569813
8 0.0807269
EOD
$conv_cudnn_resident << EOD
4 0.102304
8 0.105824
EOD
$conv_gpu_copies << EOD
4 0.120411
8 0.182126
EOD
$conv_gpu_graph << EOD
4 0.0446138
8 0.0503488
EOD
$conv_gpu_resident << EOD
4 0.0504249
8 0.0616747
EOD
$mlp_step_cpu_cpu << EOD
1 0.119116
2 0.13721
4 0.150446
8 0.181979
16 0.218717
32 0.181795
64 0.277892
EOD
$mlp_step_cudnn_copies << EOD
1 0.176218
2 0.200625
4 0.214136
8 0.158726
16 0.159435
32 0.188534
64 0.184826
EOD
$mlp_step_cudnn_graph << EOD
1 0.0403819
2 0.0463924
4 0.0473218
8 0.0953063
16 0.0962648
32 0.0547836
64 0.0581336
EOD
$mlp_step_cudnn_resident << EOD
1 0.155842
2 0.178546
4 0.18364
8 0.132414
16 0.129561
32 0.140215
64 0.168422
EOD
$mlp_step_gpu_copies << EOD
1 0.121012
2 0.150064
4 0.147409
8 0.149451
16 0.128795
32 0.131819
64 0.137828
EOD
$mlp_step_gpu_graph << EOD
1 0.0421528
2 0.0429072
4 0.0438704
8 0.0428598
16 0.0433455
32 0.0439588
64 0.0484926
EOD
$mlp_step_gpu_resident << EOD
1 0.099268
2 0.130428
4 0.124183
8 0.105827
16 0.102231
32 0.100411
64 0.105222
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
set arrow 1 from 66.7301, graph 0 to 66.7301, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'gpu resident overtakes cpu at ~66.7' at graph 0.98, graph 0.04 right tc rgb '#d62728'
set arrow 2 from 62.7772, graph 0 to 62.7772, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'gpu graph overtakes cpu at ~62.8' at graph 0.98, graph 0.08 right tc rgb '#2ca02c'
set arrow 3 from 85.9326, graph 0 to 85.9326, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 3 'cudnn resident overtakes cpu at ~85.9' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 4 from 62.3335, graph 0 to 62.3335, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 4 'cudnn graph overtakes cpu at ~62.3' at graph 0.98, graph 0.16 right tc rgb '#2ca02c'
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
set arrow 1 from 119.208, graph 0 to 119.208, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~119' at graph 0.98, graph 0.04 right tc rgb '#ff7f0e'
set arrow 2 from 64.7738, graph 0 to 64.7738, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~64.8' at graph 0.98, graph 0.08 right tc rgb '#d62728'
set arrow 3 from 45.3038, graph 0 to 45.3038, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~45.3' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
set arrow 4 from 63.1536, graph 0 to 63.1536, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 4 'cudnn graph overtakes cpu at ~63.2' at graph 0.98, graph 0.16 right tc rgb '#2ca02c'
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
set arrow 1 from 3.51746, graph 0 to 3.51746, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~3.52' at graph 0.98, graph 0.04 right tc rgb '#ff7f0e'
set arrow 2 from 33.8702, graph 0 to 33.8702, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 2 'cudnn copies overtakes cpu at ~33.9' at graph 0.98, graph 0.08 right tc rgb '#ff7f0e'
set arrow 3 from 5.22486, graph 0 to 5.22486, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 3 'cudnn resident overtakes cpu at ~5.22' at graph 0.98, graph 0.12 right tc rgb '#d62728'
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
set arrow 1 from 66.7301, graph 0 to 66.7301, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'gpu resident overtakes cpu at ~66.7' at graph 0.98, graph 0.04 right tc rgb '#d62728'
set arrow 2 from 62.7772, graph 0 to 62.7772, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'gpu graph overtakes cpu at ~62.8' at graph 0.98, graph 0.08 right tc rgb '#2ca02c'
set arrow 3 from 85.9326, graph 0 to 85.9326, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 3 'cudnn resident overtakes cpu at ~85.9' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 4 from 62.3335, graph 0 to 62.3335, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 4 'cudnn graph overtakes cpu at ~62.3' at graph 0.98, graph 0.16 right tc rgb '#2ca02c'
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
set arrow 1 from 119.208, graph 0 to 119.208, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~119' at graph 0.98, graph 0.04 right tc rgb '#ff7f0e'
set arrow 2 from 64.7738, graph 0 to 64.7738, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~64.8' at graph 0.98, graph 0.08 right tc rgb '#d62728'
set arrow 3 from 45.3038, graph 0 to 45.3038, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~45.3' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
set arrow 4 from 63.1536, graph 0 to 63.1536, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 4 'cudnn graph overtakes cpu at ~63.2' at graph 0.98, graph 0.16 right tc rgb '#2ca02c'
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
set arrow 1 from 3.51746, graph 0 to 3.51746, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~3.52' at graph 0.98, graph 0.04 right tc rgb '#ff7f0e'
set arrow 2 from 33.8702, graph 0 to 33.8702, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 2 'cudnn copies overtakes cpu at ~33.9' at graph 0.98, graph 0.08 right tc rgb '#ff7f0e'
set arrow 3 from 5.22486, graph 0 to 5.22486, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 3 'cudnn resident overtakes cpu at ~5.22' at graph 0.98, graph 0.12 right tc rgb '#d62728'
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
