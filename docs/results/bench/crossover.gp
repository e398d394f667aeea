# apps/crossover: time per step of each workload, CPU and GPU variants, log-log; a
# dashed line where a GPU curve crosses below the CPU's for good.
# CPU: Intel(R) Xeon(R) Processor, 32 threads (32 hardware)
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# gpu: NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0)
# cudnn: NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0) + cuBLAS 13.1.0 + cuDNN 9.19.0
# Run in this folder: gnuplot crossover.gp  -> crossover.png, crossover.svg

$matmul_cpu_cpu << EOD
16 0.000256952
32 0.00132542
64 0.0093829
128 6.00027
EOD
$matmul_cudnn_copies << EOD
16 0.0435428
32 0.0584488
64 0.050541
128 0.0737614
EOD
$matmul_cudnn_graph << EOD
16 0.00302861
32 0.00732383
64 0.00412433
128 0.005856
EOD
$matmul_cudnn_resident << EOD
16 0.0115374
32 0.0210329
64 0.009669
128 0.01738
EOD
$matmul_gpu_copies << EOD
16 0.0371407
32 0.0376131
64 0.0543411
128 0.063016
EOD
$matmul_gpu_graph << EOD
16 0.0028505
32 0.00281693
64 0.00430933
128 0.0054664
EOD
$matmul_gpu_resident << EOD
16 0.00563058
32 0.00588936
64 0.0069936
128 0.00573659
EOD
$dense_cpu_cpu << EOD
16 0.00502392
32 0.00617947
64 0.0199178
128 0.0640322
EOD
$dense_cudnn_copies << EOD
16 0.0812665
32 0.0678714
64 0.0824228
128 0.087687
EOD
$dense_cudnn_graph << EOD
16 0.0180174
32 0.018432
64 0.0190589
128 0.0231091
EOD
$dense_cudnn_resident << EOD
16 0.0562304
32 0.0534347
64 0.0548409
128 0.059388
EOD
$dense_gpu_copies << EOD
16 0.0450088
32 0.0393665
64 0.0473813
128 0.0506043
EOD
$dense_gpu_graph << EOD
16 0.0117493
32 0.0102098
64 0.0144873
128 0.0133826
EOD
$dense_gpu_resident << EOD
16 0.0362933
32 0.0261227
64 0.03768
128 0.03066
EOD
$conv_cpu_cpu << EOD
4 0.517815
8 10.5215
EOD
$conv_cudnn_copies << EOD
4 0.249982
8 0.392017
EOD
$conv_cudnn_graph << EOD
4 0.053984
8 0.0819467
EOD
$conv_cudnn_resident << EOD
4 0.139312
8 0.160336
EOD
$conv_gpu_copies << EOD
4 0.140168
8 0.189702
EOD
$conv_gpu_graph << EOD
4 0.0399884
8 0.0458327
EOD
$conv_gpu_resident << EOD
4 0.0477582
8 0.053544
EOD
$mlp_step_cpu_cpu << EOD
1 1.18514
2 0.732987
4 1.04714
8 1.2055
16 0.355685
32 0.250978
64 0.888266
EOD
$mlp_step_cudnn_copies << EOD
1 0.200416
2 0.232276
4 0.230639
8 0.231952
16 0.237549
32 0.258694
64 0.252731
EOD
$mlp_step_cudnn_graph << EOD
1 0.039964
2 0.0463838
4 0.0465008
8 0.096576
16 0.0975446
32 0.0548169
64 0.0580476
EOD
$mlp_step_cudnn_resident << EOD
1 0.167329
2 0.204818
4 0.208833
8 0.219712
16 0.217968
32 0.218625
64 0.207481
EOD
$mlp_step_gpu_copies << EOD
1 0.166589
2 0.176727
4 0.194658
8 0.186273
16 0.177757
32 0.176344
64 0.205057
EOD
$mlp_step_gpu_graph << EOD
1 0.041655
2 0.0418037
4 0.041964
8 0.0425694
16 0.0430157
32 0.043261
64 0.0478108
EOD
$mlp_step_gpu_resident << EOD
1 0.146473
2 0.158388
4 0.166195
8 0.156873
16 0.14518
32 0.141548
64 0.164217
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
set arrow 1 from 77.6136, graph 0 to 77.6136, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~77.6' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 57.0985, graph 0 to 57.0985, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~57.1' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 45.0078, graph 0 to 45.0078, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~45' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $matmul_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $matmul_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'matmul: cpu vs cudnn'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 77.5383, graph 0 to 77.5383, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~77.5' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 64.2272, graph 0 to 64.2272, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'cudnn resident overtakes cpu at ~64.2' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 51.1011, graph 0 to 51.1011, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'cudnn graph overtakes cpu at ~51.1' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $matmul_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $matmul_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'dense: cpu vs gpu'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 110.387, graph 0 to 110.387, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~110' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 88.2794, graph 0 to 88.2794, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~88.3' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 48.9079, graph 0 to 48.9079, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~48.9' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $dense_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $dense_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'dense: cpu vs cudnn'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 122.006, graph 0 to 122.006, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'cudnn resident overtakes cpu at ~122' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 62.303, graph 0 to 62.303, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn graph overtakes cpu at ~62.3' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
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
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $mlp_step_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $mlp_step_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'mlp_step: cpu vs cudnn'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 32.5261, graph 0 to 32.5261, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~32.5' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
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
set arrow 1 from 77.6136, graph 0 to 77.6136, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~77.6' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 57.0985, graph 0 to 57.0985, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~57.1' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 45.0078, graph 0 to 45.0078, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~45' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $matmul_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $matmul_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'matmul: cpu vs cudnn'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 77.5383, graph 0 to 77.5383, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~77.5' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 64.2272, graph 0 to 64.2272, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'cudnn resident overtakes cpu at ~64.2' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 51.1011, graph 0 to 51.1011, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'cudnn graph overtakes cpu at ~51.1' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $matmul_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $matmul_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'dense: cpu vs gpu'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 110.387, graph 0 to 110.387, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~110' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 88.2794, graph 0 to 88.2794, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~88.3' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 48.9079, graph 0 to 48.9079, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~48.9' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $dense_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $dense_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'dense: cpu vs cudnn'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 122.006, graph 0 to 122.006, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'cudnn resident overtakes cpu at ~122' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 62.303, graph 0 to 62.303, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn graph overtakes cpu at ~62.3' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
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
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $mlp_step_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $mlp_step_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'mlp_step: cpu vs cudnn'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 32.5261, graph 0 to 32.5261, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~32.5' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $mlp_step_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $mlp_step_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
unset multiplot
set output
