# apps/crossover: time per step of each workload, CPU and GPU variants, log-log; a
# dashed line where a GPU curve crosses below the CPU's for good.
# CPU: Intel(R) Xeon(R) Processor, 16 threads (16 hardware)
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# gpu: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 81079 MiB, driver 13.0)
# cudnn: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 81079 MiB, driver 13.0) + cuBLAS 13.1.0 + cuDNN 9.14.0
# Run in this folder: gnuplot crossover.gp  -> crossover.png, crossover.svg

$matmul_cpu_cpu << EOD
16 0.000207476
32 0.000696301
64 0.00493718
128 0.0378362
256 0.0858564
512 6.00337
1024 2.39935
2048 16.1449
4096 117.17
EOD
$matmul_cudnn_copies << EOD
16 0.0369647
32 0.0405985
64 0.0559867
128 0.0720208
256 0.101793
512 0.46056
1024 1.40102
2048 11.7856
4096 31.9724
EOD
$matmul_cudnn_graph << EOD
16 0.00305259
32 0.00629959
64 0.00415383
128 0.00525056
256 0.00822563
512 0.0145424
1024 0.0566361
2048 0.342005
4096 2.67296
EOD
$matmul_cudnn_resident << EOD
16 0.00858201
32 0.0139637
64 0.0123957
128 0.0129134
256 0.0132273
512 0.0147452
1024 0.0581156
2048 0.345531
4096 2.72509
EOD
$matmul_gpu_copies << EOD
16 0.0358367
32 0.0377533
64 0.0466996
128 0.0614614
256 0.0920697
512 0.412095
1024 1.5126
2048 6.74535
4096 29.343
EOD
$matmul_gpu_graph << EOD
16 0.00286152
32 0.00285876
64 0.00431242
128 0.00438424
256 0.00644333
512 0.0220563
1024 0.084135
2048 0.400038
4096 2.90586
EOD
$matmul_gpu_resident << EOD
16 0.0042638
32 0.0041613
64 0.00465114
128 0.00454608
256 0.00640393
512 0.0226953
1024 0.0853425
2048 0.403546
4096 2.90755
EOD
$dense_cpu_cpu << EOD
16 0.00497969
32 0.00797187
64 0.0170811
128 0.0492331
256 0.17877
512 0.305809
1024 0.491961
2048 1.75256
4096 5.18008
EOD
$dense_cudnn_copies << EOD
16 0.0624617
32 0.0630022
64 0.110854
128 0.0695435
256 0.0683432
512 0.0755406
1024 0.0850377
2048 0.103815
4096 0.220592
EOD
$dense_cudnn_graph << EOD
16 0.0170686
32 0.0176018
64 0.0183461
128 0.0223385
256 0.0205262
512 0.0220964
1024 0.0290423
2048 0.0582759
4096 0.150601
EOD
$dense_cudnn_resident << EOD
16 0.0456856
32 0.109239
64 0.0699392
128 0.0487319
256 0.0476823
512 0.0502352
1024 0.050641
2048 0.065461
4096 0.156539
EOD
$dense_gpu_copies << EOD
16 0.0369994
32 0.0371307
64 0.0411124
128 0.0420817
256 0.0447292
512 0.0506127
1024 0.0626052
2048 0.119006
4096 0.293135
EOD
$dense_gpu_graph << EOD
16 0.00984166
32 0.0100531
64 0.0130513
128 0.0132754
256 0.014522
512 0.018141
1024 0.0272097
2048 0.0747606
4096 0.217171
EOD
$dense_gpu_resident << EOD
16 0.0201256
32 0.0199187
64 0.0210674
128 0.0203886
256 0.020799
512 0.0220251
1024 0.030384
2048 0.080504
4096 0.22325
EOD
$conv_cpu_cpu << EOD
4 0.41121
8 0.962292
16 1.36184
32 5.31801
64 9.78961
128 34.5654
256 146.176
EOD
$conv_cudnn_copies << EOD
4 0.341654
8 0.275406
16 0.629307
32 0.763609
64 2.43516
128 2.96331
256 8.38003
EOD
$conv_cudnn_graph << EOD
4 0.0652833
8 0.0881517
16 0.106236
32 0.187017
64 0.379691
128 1.22413
256 4.3751
EOD
$conv_cudnn_resident << EOD
4 0.164395
8 0.0973568
16 0.245416
32 0.213708
64 0.459744
128 1.2933
256 4.5641
EOD
$conv_gpu_copies << EOD
4 0.115815
8 0.240737
16 0.318726
32 0.685114
64 1.7288
128 2.97491
256 9.22908
EOD
$conv_gpu_graph << EOD
4 0.0450971
8 0.0501735
16 0.0715093
32 0.120855
64 0.321845
128 1.17712
256 5.06851
EOD
$conv_gpu_resident << EOD
4 0.0503435
8 0.0560691
16 0.0769747
32 0.127342
64 0.335351
128 1.18797
256 5.12854
EOD
$mlp_step_cpu_cpu << EOD
1 0.11197
2 0.148999
4 0.157769
8 0.148713
16 0.235419
32 0.2289
64 0.308912
128 0.41546
256 0.543525
512 0.904456
1024 1.42909
2048 2.40095
4096 3.62092
8192 6.91702
EOD
$mlp_step_cudnn_copies << EOD
1 0.151788
2 0.200156
4 0.160485
8 0.169841
16 0.17772
32 0.570612
64 0.184571
128 0.208844
256 0.289358
512 0.404428
1024 0.552884
2048 0.881508
4096 1.83914
8192 2.92757
EOD
$mlp_step_cudnn_graph << EOD
1 0.039198
2 0.045151
4 0.045445
8 0.0945202
16 0.0954466
32 0.0538388
64 0.0569955
128 0.0625131
256 0.0688339
512 0.0820929
1024 0.0877093
2048 0.098015
4096 0.144016
8192 0.212118
EOD
$mlp_step_cudnn_resident << EOD
1 0.130333
2 0.173965
4 0.139865
8 0.147885
16 0.155515
32 0.331059
64 0.152423
128 0.151619
256 0.15196
512 0.160533
1024 0.159175
2048 0.162674
4096 0.193053
8192 0.246434
EOD
$mlp_step_gpu_copies << EOD
1 0.128021
2 0.14807
4 0.139462
8 0.136211
16 0.137076
32 0.160805
64 0.154872
128 0.164336
256 0.225667
512 0.332813
1024 0.490532
2048 0.778486
4096 1.49626
8192 3.00786
EOD
$mlp_step_gpu_graph << EOD
1 0.0412007
2 0.0412713
4 0.0414719
8 0.0419283
16 0.0424235
32 0.0427642
64 0.0473469
128 0.0507658
256 0.0585231
512 0.0703223
1024 0.086581
2048 0.122968
4096 0.198563
8192 0.359321
EOD
$mlp_step_gpu_resident << EOD
1 0.106484
2 0.131261
4 0.113482
8 0.105755
16 0.104493
32 0.124326
64 0.106669
128 0.108967
256 0.173186
512 0.123017
1024 0.121273
2048 0.152648
4096 0.230589
8192 0.378939
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
set arrow 1 from 260.551, graph 0 to 260.551, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies beats cpu from ~261' at 260.551, graph 0.91 offset 0.5,0 tc rgb '#ff7f0e'
set arrow 2 from 62.5829, graph 0 to 62.5829, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident beats cpu from ~62.6' at 62.5829, graph 0.85 offset 0.5,0 tc rgb '#d62728'
set arrow 3 from 60.2371, graph 0 to 60.2371, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph beats cpu from ~60.2' at 60.2371, graph 0.79 offset 0.5,0 tc rgb '#2ca02c'
set arrow 4 from 267.276, graph 0 to 267.276, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 4 'cudnn copies beats cpu from ~267' at 267.276, graph 0.73 offset 0.5,0 tc rgb '#ff7f0e'
set arrow 5 from 88.1142, graph 0 to 88.1142, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 5 'cudnn resident beats cpu from ~88.1' at 88.1142, graph 0.67 offset 0.5,0 tc rgb '#d62728'
set arrow 6 from 60.8533, graph 0 to 60.8533, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 6 'cudnn graph beats cpu from ~60.9' at 60.8533, graph 0.61 offset 0.5,0 tc rgb '#2ca02c'
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
set arrow 1 from 115.232, graph 0 to 115.232, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies beats cpu from ~115' at 115.232, graph 0.91 offset 0.5,0 tc rgb '#ff7f0e'
set arrow 2 from 73.1203, graph 0 to 73.1203, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident beats cpu from ~73.1' at 73.1203, graph 0.85 offset 0.5,0 tc rgb '#d62728'
set arrow 3 from 44.1076, graph 0 to 44.1076, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph beats cpu from ~44.1' at 44.1076, graph 0.79 offset 0.5,0 tc rgb '#2ca02c'
set arrow 4 from 153.732, graph 0 to 153.732, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 4 'cudnn copies beats cpu from ~154' at 153.732, graph 0.73 offset 0.5,0 tc rgb '#ff7f0e'
set arrow 5 from 127.362, graph 0 to 127.362, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 5 'cudnn resident beats cpu from ~127' at 127.362, graph 0.67 offset 0.5,0 tc rgb '#d62728'
set arrow 6 from 67.7857, graph 0 to 67.7857, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 6 'cudnn graph beats cpu from ~67.8' at 67.7857, graph 0.61 offset 0.5,0 tc rgb '#2ca02c'
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
set arrow 1 from 1.93911, graph 0 to 1.93911, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies beats cpu from ~1.94' at 1.93911, graph 0.91 offset 0.5,0 tc rgb '#ff7f0e'
set arrow 2 from 49.8476, graph 0 to 49.8476, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 2 'cudnn copies beats cpu from ~49.8' at 49.8476, graph 0.85 offset 0.5,0 tc rgb '#ff7f0e'
set arrow 3 from 40.5924, graph 0 to 40.5924, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 3 'cudnn resident beats cpu from ~40.6' at 40.5924, graph 0.79 offset 0.5,0 tc rgb '#d62728'
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
set arrow 1 from 260.551, graph 0 to 260.551, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies beats cpu from ~261' at 260.551, graph 0.91 offset 0.5,0 tc rgb '#ff7f0e'
set arrow 2 from 62.5829, graph 0 to 62.5829, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident beats cpu from ~62.6' at 62.5829, graph 0.85 offset 0.5,0 tc rgb '#d62728'
set arrow 3 from 60.2371, graph 0 to 60.2371, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph beats cpu from ~60.2' at 60.2371, graph 0.79 offset 0.5,0 tc rgb '#2ca02c'
set arrow 4 from 267.276, graph 0 to 267.276, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 4 'cudnn copies beats cpu from ~267' at 267.276, graph 0.73 offset 0.5,0 tc rgb '#ff7f0e'
set arrow 5 from 88.1142, graph 0 to 88.1142, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 5 'cudnn resident beats cpu from ~88.1' at 88.1142, graph 0.67 offset 0.5,0 tc rgb '#d62728'
set arrow 6 from 60.8533, graph 0 to 60.8533, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 6 'cudnn graph beats cpu from ~60.9' at 60.8533, graph 0.61 offset 0.5,0 tc rgb '#2ca02c'
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
set arrow 1 from 115.232, graph 0 to 115.232, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies beats cpu from ~115' at 115.232, graph 0.91 offset 0.5,0 tc rgb '#ff7f0e'
set arrow 2 from 73.1203, graph 0 to 73.1203, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 2 'gpu resident beats cpu from ~73.1' at 73.1203, graph 0.85 offset 0.5,0 tc rgb '#d62728'
set arrow 3 from 44.1076, graph 0 to 44.1076, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 3 'gpu graph beats cpu from ~44.1' at 44.1076, graph 0.79 offset 0.5,0 tc rgb '#2ca02c'
set arrow 4 from 153.732, graph 0 to 153.732, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 4 'cudnn copies beats cpu from ~154' at 153.732, graph 0.73 offset 0.5,0 tc rgb '#ff7f0e'
set arrow 5 from 127.362, graph 0 to 127.362, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 5 'cudnn resident beats cpu from ~127' at 127.362, graph 0.67 offset 0.5,0 tc rgb '#d62728'
set arrow 6 from 67.7857, graph 0 to 67.7857, graph 1 nohead dt 2 lw 1.5 lc rgb '#2ca02c'
set label 6 'cudnn graph beats cpu from ~67.8' at 67.7857, graph 0.61 offset 0.5,0 tc rgb '#2ca02c'
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
set arrow 1 from 1.93911, graph 0 to 1.93911, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 1 'gpu copies beats cpu from ~1.94' at 1.93911, graph 0.91 offset 0.5,0 tc rgb '#ff7f0e'
set arrow 2 from 49.8476, graph 0 to 49.8476, graph 1 nohead dt 2 lw 1.5 lc rgb '#ff7f0e'
set label 2 'cudnn copies beats cpu from ~49.8' at 49.8476, graph 0.85 offset 0.5,0 tc rgb '#ff7f0e'
set arrow 3 from 40.5924, graph 0 to 40.5924, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'
set label 3 'cudnn resident beats cpu from ~40.6' at 40.5924, graph 0.79 offset 0.5,0 tc rgb '#d62728'
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
