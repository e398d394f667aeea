# apps/crossover: time per step of each workload, CPU and GPU variants, log-log; a
# dashed line where a GPU curve crosses below the CPU's for good.
# CPU: Intel(R) Xeon(R) Processor, 16 threads (16 hardware)
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# gpu: NVIDIA H200 (compute capability 9.0, sm_90, 132 SMs, 143155 MiB, driver 13.0)
# cudnn: NVIDIA H200 (compute capability 9.0, sm_90, 132 SMs, 143155 MiB, driver 13.0) + cuBLAS 13.1.0 + cuDNN 9.19.0
# Run in this folder: gnuplot crossover.gp  -> crossover.png, crossover.svg

$matmul_cpu_cpu << EOD
16 0.000278676
32 0.000643139
64 0.00456593
128 0.0336472
EOD
$matmul_cudnn_copies << EOD
16 0.0401565
32 0.0385866
64 0.058802
128 0.0711791
EOD
$matmul_cudnn_graph << EOD
16 0.00298009
32 0.010904
64 0.00690933
128 0.00821818
EOD
$matmul_cudnn_resident << EOD
16 0.0152914
32 0.0173806
64 0.0206133
128 0.0220864
EOD
$matmul_gpu_copies << EOD
16 0.0345853
32 0.0371697
64 0.0510387
128 0.0624342
EOD
$matmul_gpu_graph << EOD
16 0.00605091
32 0.00282487
64 0.00827378
128 0.0082912
EOD
$matmul_gpu_resident << EOD
16 0.0126263
32 0.007824
64 0.0123154
128 0.0136914
EOD
$dense_cpu_cpu << EOD
16 0.00529067
32 0.00976317
64 0.0147788
128 0.0386543
EOD
$dense_cudnn_copies << EOD
16 0.0778252
32 0.0660022
64 0.0668457
128 0.0705673
EOD
$dense_cudnn_graph << EOD
16 0.0186967
32 0.0199947
64 0.0179787
128 0.0216899
EOD
$dense_cudnn_resident << EOD
16 0.0740672
32 0.0586507
64 0.049472
128 0.0509728
EOD
$dense_gpu_copies << EOD
16 0.0472527
32 0.0482117
64 0.0475504
128 0.0425714
EOD
$dense_gpu_graph << EOD
16 0.0127787
32 0.0100716
64 0.0151733
128 0.0138014
EOD
$dense_gpu_resident << EOD
16 0.0327131
32 0.0370667
64 0.035888
128 0.0271863
EOD
$conv_cpu_cpu << EOD
4 0.472576
8 0.783656
EOD
$conv_cudnn_copies << EOD
4 0.298814
8 0.339319
EOD
$conv_cudnn_graph << EOD
4 0.0532256
8 0.0777554
EOD
$conv_cudnn_resident << EOD
4 0.113608
8 0.145224
EOD
$conv_gpu_copies << EOD
4 0.112098
8 0.174631
EOD
$conv_gpu_graph << EOD
4 0.038192
8 0.046784
EOD
$conv_gpu_resident << EOD
4 0.0501902
8 0.0543502
EOD
$mlp_step_cpu_cpu << EOD
1 0.132612
2 0.140588
4 0.144196
8 0.192603
16 0.26917
32 0.251453
64 0.324944
EOD
$mlp_step_cudnn_copies << EOD
1 0.188282
2 0.198714
4 0.208796
8 0.217038
16 0.229264
32 0.254939
64 0.237969
EOD
$mlp_step_cudnn_graph << EOD
1 0.038619
2 0.0443631
4 0.0445289
8 0.0932958
16 0.0942537
32 0.0528316
64 0.0560504
EOD
$mlp_step_cudnn_resident << EOD
1 0.161785
2 0.178659
4 0.185417
8 0.188535
16 0.208666
32 0.216265
64 0.200524
EOD
$mlp_step_gpu_copies << EOD
1 0.168933
2 0.167452
4 0.166513
8 0.173253
16 0.176049
32 0.195132
64 0.1909
EOD
$mlp_step_gpu_graph << EOD
1 0.0406974
2 0.0410008
4 0.0411199
8 0.0414438
16 0.0417162
32 0.0422232
64 0.0466695
EOD
$mlp_step_gpu_resident << EOD
1 0.146685
2 0.147142
4 0.152372
8 0.149669
16 0.156984
32 0.166828
64 0.16166
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
set arrow 1 from 92.0665, graph 0 to 92.0665, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'gpu resident overtakes cpu at ~92.1' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 78.6813, graph 0 to 78.6813, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'gpu graph overtakes cpu at ~78.7' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $matmul_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $matmul_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'matmul: cpu vs cudnn'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 110.025, graph 0 to 110.025, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'cudnn resident overtakes cpu at ~110' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 74.9124, graph 0 to 74.9124, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn graph overtakes cpu at ~74.9' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $matmul_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $matmul_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'dense: cpu vs gpu'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 105.126, graph 0 to 105.126, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'gpu resident overtakes cpu at ~105' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 65.1162, graph 0 to 65.1162, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'gpu graph overtakes cpu at ~65.1' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $dense_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $dense_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'dense: cpu vs cudnn'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 76.2828, graph 0 to 76.2828, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 1 'cudnn graph overtakes cpu at ~76.3' at graph 0.98, graph 0.06 right tc rgb '#2ca02c'
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
set arrow 1 from 5.96328, graph 0 to 5.96328, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~5.96' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 4.52979, graph 0 to 4.52979, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~4.53' at graph 0.98, graph 0.12 right tc rgb '#d62728'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $mlp_step_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $mlp_step_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'mlp_step: cpu vs cudnn'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 32.9528, graph 0 to 32.9528, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~33' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 7.57758, graph 0 to 7.57758, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'cudnn resident overtakes cpu at ~7.58' at graph 0.98, graph 0.12 right tc rgb '#d62728'
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
set arrow 1 from 92.0665, graph 0 to 92.0665, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'gpu resident overtakes cpu at ~92.1' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 78.6813, graph 0 to 78.6813, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'gpu graph overtakes cpu at ~78.7' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $matmul_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $matmul_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'matmul: cpu vs cudnn'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 110.025, graph 0 to 110.025, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'cudnn resident overtakes cpu at ~110' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 74.9124, graph 0 to 74.9124, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn graph overtakes cpu at ~74.9' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $matmul_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $matmul_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'dense: cpu vs gpu'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 105.126, graph 0 to 105.126, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'gpu resident overtakes cpu at ~105' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 65.1162, graph 0 to 65.1162, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'gpu graph overtakes cpu at ~65.1' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $dense_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $dense_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'dense: cpu vs cudnn'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 76.2828, graph 0 to 76.2828, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 1 'cudnn graph overtakes cpu at ~76.3' at graph 0.98, graph 0.06 right tc rgb '#2ca02c'
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
set arrow 1 from 5.96328, graph 0 to 5.96328, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~5.96' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 4.52979, graph 0 to 4.52979, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~4.53' at graph 0.98, graph 0.12 right tc rgb '#d62728'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $mlp_step_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $mlp_step_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'mlp_step: cpu vs cudnn'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 32.9528, graph 0 to 32.9528, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~33' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 7.57758, graph 0 to 7.57758, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'cudnn resident overtakes cpu at ~7.58' at graph 0.98, graph 0.12 right tc rgb '#d62728'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $mlp_step_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $mlp_step_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
unset multiplot
set output
