# apps/crossover: time per step of each workload, CPU and GPU variants, log-log; a
# dashed line where a GPU curve crosses below the CPU's for good.
# CPU: Intel(R) Xeon(R) Processor, 16 threads (16 hardware)
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# gpu: NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0)
# cudnn: NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0) + cuBLAS 13.1.0 + cuDNN 9.19.0
# Run in this folder: gnuplot crossover.gp  -> crossover.png, crossover.svg

$matmul_cpu_cpu << EOD
16 0.000198212
32 0.000574841
64 0.00398122
128 0.0319491
EOD
$matmul_cudnn_copies << EOD
16 0.0389433
32 0.0389407
64 0.0450971
128 0.0593326
EOD
$matmul_cudnn_graph << EOD
16 0.00301496
32 0.00623759
64 0.00407552
128 0.00530041
EOD
$matmul_cudnn_resident << EOD
16 0.00763061
32 0.0107169
64 0.00836389
128 0.00862063
EOD
$matmul_gpu_copies << EOD
16 0.0357893
32 0.0366072
64 0.0423561
128 0.0544781
EOD
$matmul_gpu_graph << EOD
16 0.00282458
32 0.00280424
64 0.00425932
128 0.00445067
EOD
$matmul_gpu_resident << EOD
16 0.00392167
32 0.00370708
64 0.0047513
128 0.00452114
EOD
$dense_cpu_cpu << EOD
16 0.00292958
32 0.00564143
64 0.015729
128 0.0410195
EOD
$dense_cudnn_copies << EOD
16 0.0521154
32 0.0543856
64 0.0526456
128 0.056418
EOD
$dense_cudnn_graph << EOD
16 0.016896
32 0.0174868
64 0.0181363
128 0.0220305
EOD
$dense_cudnn_resident << EOD
16 0.0359705
32 0.0351337
64 0.0361477
128 0.0375778
EOD
$dense_gpu_copies << EOD
16 0.0322927
32 0.0327354
64 0.0350673
128 0.03656
EOD
$dense_gpu_graph << EOD
16 0.00979044
32 0.00996449
64 0.0129986
128 0.0133139
EOD
$dense_gpu_resident << EOD
16 0.0171061
32 0.0165639
64 0.0180911
128 0.01922
EOD
$conv_cpu_cpu << EOD
4 0.454569
8 0.641806
EOD
$conv_cudnn_copies << EOD
4 0.190501
8 0.261756
EOD
$conv_cudnn_graph << EOD
4 0.0527904
8 0.0773669
EOD
$conv_cudnn_resident << EOD
4 0.0877376
8 0.09616
EOD
$conv_gpu_copies << EOD
4 0.103489
8 0.156993
EOD
$conv_gpu_graph << EOD
4 0.039672
8 0.0455622
EOD
$conv_gpu_resident << EOD
4 0.0449455
8 0.0508338
EOD
$mlp_step_cpu_cpu << EOD
1 0.102389
2 0.101575
4 0.117264
8 0.135633
16 0.200197
32 0.198592
64 0.264108
EOD
$mlp_step_cudnn_copies << EOD
1 0.120474
2 0.135982
4 0.136445
8 0.148198
16 0.153402
32 0.153444
64 0.16227
EOD
$mlp_step_cudnn_graph << EOD
1 0.0396455
2 0.045212
4 0.0455079
8 0.0943405
16 0.0953255
32 0.0535681
64 0.0568954
EOD
$mlp_step_cudnn_resident << EOD
1 0.102945
2 0.113883
4 0.121452
8 0.119985
16 0.120109
32 0.126476
64 0.124901
EOD
$mlp_step_gpu_copies << EOD
1 0.107814
2 0.107919
4 0.108647
8 0.110692
16 0.117828
32 0.117905
64 0.127559
EOD
$mlp_step_gpu_graph << EOD
1 0.0415838
2 0.0416794
4 0.0416196
8 0.0422157
16 0.0426813
32 0.0430034
64 0.0476348
EOD
$mlp_step_gpu_resident << EOD
1 0.0873245
2 0.0893653
4 0.08841
8 0.0868655
16 0.0869977
32 0.0869765
64 0.0870052
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
set arrow 1 from 67.7869, graph 0 to 67.7869, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'gpu resident overtakes cpu at ~67.8' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 65.4863, graph 0 to 65.4863, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'gpu graph overtakes cpu at ~65.5' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $matmul_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $matmul_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'matmul: cpu vs cudnn'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 82.2364, graph 0 to 82.2364, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'cudnn resident overtakes cpu at ~82.2' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 64.5733, graph 0 to 64.5733, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn graph overtakes cpu at ~64.6' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $matmul_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $matmul_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'dense: cpu vs gpu'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 117.333, graph 0 to 117.333, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~117' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 71.2987, graph 0 to 71.2987, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~71.3' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 53.7792, graph 0 to 53.7792, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~53.8' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $dense_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $dense_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'dense: cpu vs cudnn'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 119.82, graph 0 to 119.82, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'cudnn resident overtakes cpu at ~120' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 72.8265, graph 0 to 72.8265, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn graph overtakes cpu at ~72.8' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
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
set arrow 1 from 2.7179, graph 0 to 2.7179, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~2.72' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $mlp_step_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $mlp_step_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'mlp_step: cpu vs cudnn'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 9.51154, graph 0 to 9.51154, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~9.51' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 4.66712, graph 0 to 4.66712, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'cudnn resident overtakes cpu at ~4.67' at graph 0.98, graph 0.12 right tc rgb '#d62728'
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
set arrow 1 from 67.7869, graph 0 to 67.7869, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'gpu resident overtakes cpu at ~67.8' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 65.4863, graph 0 to 65.4863, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'gpu graph overtakes cpu at ~65.5' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $matmul_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $matmul_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'matmul: cpu vs cudnn'
set xlabel 'n'
set ylabel 'ms per step'
set arrow 1 from 82.2364, graph 0 to 82.2364, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'cudnn resident overtakes cpu at ~82.2' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 64.5733, graph 0 to 64.5733, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn graph overtakes cpu at ~64.6' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
plot $matmul_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $matmul_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $matmul_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $matmul_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
set title 'dense: cpu vs gpu'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 117.333, graph 0 to 117.333, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~117' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 71.2987, graph 0 to 71.2987, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident overtakes cpu at ~71.3' at graph 0.98, graph 0.12 right tc rgb '#d62728'
set arrow 3 from 53.7792, graph 0 to 53.7792, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph overtakes cpu at ~53.8' at graph 0.98, graph 0.18 right tc rgb '#2ca02c'
plot $dense_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $dense_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $dense_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $dense_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'dense: cpu vs cudnn'
set xlabel 'width'
set ylabel 'ms per step'
set arrow 1 from 119.82, graph 0 to 119.82, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 1 'cudnn resident overtakes cpu at ~120' at graph 0.98, graph 0.06 right tc rgb '#d62728'
set arrow 2 from 72.8265, graph 0 to 72.8265, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 2 'cudnn graph overtakes cpu at ~72.8' at graph 0.98, graph 0.12 right tc rgb '#2ca02c'
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
set arrow 1 from 2.7179, graph 0 to 2.7179, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies overtakes cpu at ~2.72' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_gpu_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'gpu copies', \
     $mlp_step_gpu_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'gpu resident', \
     $mlp_step_gpu_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'gpu graph'
unset arrow
unset label
set title 'mlp_step: cpu vs cudnn'
set xlabel 'batch'
set ylabel 'ms per step'
set arrow 1 from 9.51154, graph 0 to 9.51154, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'cudnn copies overtakes cpu at ~9.51' at graph 0.98, graph 0.06 right tc rgb '#ff7f0e'
set arrow 2 from 4.66712, graph 0 to 4.66712, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'cudnn resident overtakes cpu at ~4.67' at graph 0.98, graph 0.12 right tc rgb '#d62728'
plot $mlp_step_cpu_cpu using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'cpu', \
     $mlp_step_cudnn_copies using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#ff7f0e' title 'cudnn copies', \
     $mlp_step_cudnn_resident using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#d62728' title 'cudnn resident', \
     $mlp_step_cudnn_graph using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2ca02c' title 'cudnn graph'
unset arrow
unset label
unset multiplot
set output
