# apps/crossover: time per step of each workload, CPU and GPU variants, log-log; a
# dashed line where a GPU curve crosses below the CPU's for good.
# CPU: Intel(R) Xeon(R) Processor, 16 threads (16 hardware)
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# gpu: NVIDIA H200 (compute capability 9.0, sm_90, 132 SMs, 143155 MiB, driver 13.0)
# cudnn: NVIDIA H200 (compute capability 9.0, sm_90, 132 SMs, 143155 MiB, driver 13.0) + cuBLAS 13.1.0 + cuDNN 9.19.0
# Run in this folder: gnuplot crossover.gp  -> crossover.png, crossover.svg

$matmul_cpu_cpu << EOD
16 0.000235136
32 0.000526683
64 0.00359591
128 5.98909
EOD
$matmul_cudnn_copies << EOD
16 0.0384095
32 0.0358427
64 0.047868
128 0.0694746
EOD
$matmul_cudnn_graph << EOD
16 0.00278176
32 0.00619106
64 0.00404617
128 0.00518885
EOD
$matmul_cudnn_resident << EOD
16 0.00657723
32 0.0115179
64 0.0133614
128 0.0126834
EOD
$matmul_gpu_copies << EOD
16 0.0312888
32 0.0368513
64 0.0432199
128 0.0611812
EOD
$matmul_gpu_graph << EOD
16 0.00268862
32 0.00269105
64 0.00407012
128 0.00429224
EOD
$matmul_gpu_resident << EOD
16 0.0043834
32 0.00427154
64 0.00510756
128 0.00559782
EOD
$dense_cpu_cpu << EOD
16 0.00549443
32 0.00931695
64 0.0187606
128 0.0541029
EOD
$dense_cudnn_copies << EOD
16 0.0635074
32 0.0716754
64 0.0720927
128 0.075085
EOD
$dense_cudnn_graph << EOD
16 0.0166129
32 0.0170227
64 0.0177797
128 0.0219056
EOD
$dense_cudnn_resident << EOD
16 0.0492672
32 0.0542144
64 0.0504533
128 0.054112
EOD
$dense_gpu_copies << EOD
16 0.0412939
32 0.0431124
64 0.0412761
128 0.0477711
EOD
$dense_gpu_graph << EOD
16 0.00947423
32 0.00979774
64 0.0124985
128 0.013
EOD
$dense_gpu_resident << EOD
16 0.0236766
32 0.0225634
64 0.0254684
128 0.0283964
EOD
$conv_cpu_cpu << EOD
4 0.423461
8 0.679236
EOD
$conv_cudnn_copies << EOD
4 0.193943
8 0.295573
EOD
$conv_cudnn_graph << EOD
4 0.05344
8 0.0782263
EOD
$conv_cudnn_resident << EOD
4 0.0988672
8 0.100896
EOD
$conv_gpu_copies << EOD
4 0.117523
8 0.189036
EOD
$conv_gpu_graph << EOD
4 0.038688
8 0.0474432
EOD
$conv_gpu_resident << EOD
4 0.0447218
8 0.0528889
EOD
$mlp_step_cpu_cpu << EOD
1 0.11557
2 0.125586
4 0.132319
8 0.177513
16 0.209899
32 0.201255
64 0.285949
EOD
$mlp_step_cudnn_copies << EOD
1 0.124187
2 0.150763
4 0.151105
8 0.157972
16 0.151789
32 0.174992
64 0.167144
EOD
$mlp_step_cudnn_graph << EOD
1 0.0348801
2 0.040399
4 0.040767
8 0.0902715
16 0.0910503
32 0.048543
64 0.0519704
EOD
$mlp_step_cudnn_resident << EOD
1 0.103472
2 0.119609
4 0.120221
8 0.123554
16 0.120434
32 0.127559
64 0.132306
EOD
$mlp_step_gpu_copies << EOD
1 0.119823
2 0.108061
4 0.133165
8 0.150822
16 0.114622
32 0.144271
64 0.129631
EOD
$mlp_step_gpu_graph << EOD
1 0.0361841
2 0.036856
4 0.0366111
8 0.0371279
16 0.0376981
32 0.0379102
64 0.0421945
EOD
$mlp_step_gpu_resident << EOD
1 0.0925343
2 0.0933468
4 0.091353
8 0.0927292
16 0.0895748
32 0.0955072
64 0.0957685
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
set arrow 1 from 81.6669, graph 0 to 81.6669, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~81.7' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 66.1606, graph 0 to 66.1606, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~66.2' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 64.7505, graph 0 to 64.7505, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~64.8' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $matmul_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $matmul_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'matmul: cpu vs cudnn'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 82.5631, graph 0 to 82.5631, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~82.6' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 72.2894, graph 0 to 72.2894, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'cudnn resident overtakes cpu at ~72.3' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 64.7342, graph 0 to 64.7342, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'cudnn graph overtakes cpu at ~64.7' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $matmul_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $matmul_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'dense: cpu vs gpu'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 116.458, graph 0 to 116.458, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~116' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 79.9855, graph 0 to 79.9855, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~80' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 34.5408, graph 0 to 34.5408, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~34.5' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $dense_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $dense_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'dense: cpu vs cudnn'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 60.4717, graph 0 to 60.4717, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 1 'cudnn graph overtakes cpu at ~60.5' at graph 0.98, graph 0.06 right tc rgb '#2ca02c'
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
set arrow 1 from 4.10577, graph 0 to 4.10577, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~4.11' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $mlp_step_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $mlp_step_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'mlp_step: cpu vs cudnn'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 5.78512, graph 0 to 5.78512, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~5.79' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
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
set arrow 1 from 81.6669, graph 0 to 81.6669, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~81.7' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 66.1606, graph 0 to 66.1606, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~66.2' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 64.7505, graph 0 to 64.7505, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~64.8' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $matmul_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $matmul_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'matmul: cpu vs cudnn'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 82.5631, graph 0 to 82.5631, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~82.6' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 72.2894, graph 0 to 72.2894, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'cudnn resident overtakes cpu at ~72.3' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 64.7342, graph 0 to 64.7342, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'cudnn graph overtakes cpu at ~64.7' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $matmul_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $matmul_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'dense: cpu vs gpu'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 116.458, graph 0 to 116.458, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~116' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 79.9855, graph 0 to 79.9855, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~80' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 34.5408, graph 0 to 34.5408, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~34.5' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $dense_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $dense_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'dense: cpu vs cudnn'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 60.4717, graph 0 to 60.4717, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 1 'cudnn graph overtakes cpu at ~60.5' at graph 0.98, graph 0.06 right tc rgb '#2ca02c'
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
set arrow 1 from 4.10577, graph 0 to 4.10577, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~4.11' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $mlp_step_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $mlp_step_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'mlp_step: cpu vs cudnn'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 5.78512, graph 0 to 5.78512, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~5.79' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $mlp_step_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $mlp_step_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
unset multiplot
set output
