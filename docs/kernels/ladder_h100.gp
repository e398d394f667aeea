# From docs/results/logs/2026-11-23_h100_kernel_bench.csv: apps/kernel_bench at 4096^3 and over the square sizes.
$ladder << EOD
0 "v3_smem_tiling" 6.24
1 "v4_blocktile_1d" 19.41
2 "v5_blocktile_2d" 18.56
3 "v6_vectorized" 36.99
4 "v7_warptile" 39.83
5 "v8_async_bigtile" 47.28
6 "v9_tf32_mma" 136.41
EOD
$cublas_fp32 << EOD
128 944.7
256 5218.1
512 21196.7
1024 40357.7
2048 51267.3
4096 51038.8
8192 51451.1
EOD
$cublas_tf32 << EOD
128 1142.7
256 6880.4
512 37374.1
1024 156194.0
2048 361602.0
4096 383103.0
8192 412675.0
EOD
$engine << EOD
128 633.8
256 4489.7
512 12706.2
1024 26520.0
2048 37960.2
4096 40380.7
8192 41185.7
EOD
$engine_tf32 << EOD
128 634.3
256 4489.7
512 18456.8
1024 56370.3
2048 115805.0
4096 137162.0
8192 142125.0
EOD
$v1_naive << EOD
128 59.3
256 230.1
512 487.2
1024 492.6
2048 482.5
EOD
$v2_coalesced << EOD
128 621.9
256 2734.6
512 6112.4
1024 6316.1
2048 6302.3
EOD
$v3_smem_tiling << EOD
128 583.5
256 2527.9
512 6176.0
1024 6647.7
2048 6659.4
4096 6241.3
8192 6320.3
EOD
$v4_blocktile_1d << EOD
128 315.4
256 1327.3
512 5380.2
1024 16320.2
2048 18603.9
4096 19411.0
8192 20035.2
EOD
$v5_blocktile_2d << EOD
128 255.9
256 1056.1
512 4162.9
1024 14045.4
2048 19076.5
4096 18564.6
8192 18170.7
EOD
$v6_vectorized << EOD
128 199.0
256 840.9
512 3538.6
1024 14169.9
2048 36591.5
4096 36986.4
8192 35444.6
EOD
$v7_warptile << EOD
128 236.9
256 1049.8
512 4322.1
1024 17814.9
2048 38732.5
4096 39827.6
8192 41192.8
EOD
$v8_async_bigtile << EOD
128 156.5
256 677.6
512 2128.6
1024 11630.7
2048 46222.2
4096 47278.0
8192 47734.1
EOD
$v9_tf32_mma << EOD
128 437.5
256 2386.1
512 11433.3
1024 50484.4
2048 117503.0
4096 136413.0
8192 142055.0
EOD
set terminal pngcairo size 900,520
set output 'ladder_h100.png'
reset
set termoption noenhanced
set title 'SGEMM ladder at 4096^3 (TFLOP/s, higher is better)'
set style fill solid 0.8
set boxwidth 0.7
set yrange [0:*]
set grid ytics
set xtics rotate by -30 nomirror
set ylabel 'TFLOP/s'
set key top left
plot $ladder using 1:3:xtic(2) with boxes lc rgb '#3a6ea5' title 'ours', \
     $ladder using 1:3:(sprintf('%.1f', $3)) with labels offset 0,0.7 notitle, \
     51.04 with lines dt 2 lw 2 title 'cublas_fp32 (51.0)', \
     383.10 with lines dt 2 lw 2 title 'cublas_tf32 (383.1)'
set output 'ladder_h100_sizes.png'
reset
set termoption noenhanced
set title 'SGEMM GFLOP/s over square sizes M = N = K'
set logscale xy
set xlabel 'n'
set ylabel 'GFLOP/s'
set grid
set key outside right
plot $cublas_fp32 with linespoints lw 3 title 'cublas_fp32', \
     $cublas_tf32 with linespoints lw 3 title 'cublas_tf32', \
     $engine with linespoints lw 3 title 'engine', \
     $engine_tf32 with linespoints lw 3 title 'engine_tf32', \
     $v1_naive with linespoints lw 1 title 'v1_naive', \
     $v2_coalesced with linespoints lw 1 title 'v2_coalesced', \
     $v3_smem_tiling with linespoints lw 1 title 'v3_smem_tiling', \
     $v4_blocktile_1d with linespoints lw 1 title 'v4_blocktile_1d', \
     $v5_blocktile_2d with linespoints lw 1 title 'v5_blocktile_2d', \
     $v6_vectorized with linespoints lw 1 title 'v6_vectorized', \
     $v7_warptile with linespoints lw 1 title 'v7_warptile', \
     $v8_async_bigtile with linespoints lw 1 title 'v8_async_bigtile', \
     $v9_tf32_mma with linespoints lw 1 title 'v9_tf32_mma'
set terminal svg size 900,520
set output 'ladder_h100.svg'
reset
set termoption noenhanced
set title 'SGEMM ladder at 4096^3 (TFLOP/s, higher is better)'
set style fill solid 0.8
set boxwidth 0.7
set yrange [0:*]
set grid ytics
set xtics rotate by -30 nomirror
set ylabel 'TFLOP/s'
set key top left
plot $ladder using 1:3:xtic(2) with boxes lc rgb '#3a6ea5' title 'ours', \
     $ladder using 1:3:(sprintf('%.1f', $3)) with labels offset 0,0.7 notitle, \
     51.04 with lines dt 2 lw 2 title 'cublas_fp32 (51.0)', \
     383.10 with lines dt 2 lw 2 title 'cublas_tf32 (383.1)'
set output 'ladder_h100_sizes.svg'
reset
set termoption noenhanced
set title 'SGEMM GFLOP/s over square sizes M = N = K'
set logscale xy
set xlabel 'n'
set ylabel 'GFLOP/s'
set grid
set key outside right
plot $cublas_fp32 with linespoints lw 3 title 'cublas_fp32', \
     $cublas_tf32 with linespoints lw 3 title 'cublas_tf32', \
     $engine with linespoints lw 3 title 'engine', \
     $engine_tf32 with linespoints lw 3 title 'engine_tf32', \
     $v1_naive with linespoints lw 1 title 'v1_naive', \
     $v2_coalesced with linespoints lw 1 title 'v2_coalesced', \
     $v3_smem_tiling with linespoints lw 1 title 'v3_smem_tiling', \
     $v4_blocktile_1d with linespoints lw 1 title 'v4_blocktile_1d', \
     $v5_blocktile_2d with linespoints lw 1 title 'v5_blocktile_2d', \
     $v6_vectorized with linespoints lw 1 title 'v6_vectorized', \
     $v7_warptile with linespoints lw 1 title 'v7_warptile', \
     $v8_async_bigtile with linespoints lw 1 title 'v8_async_bigtile', \
     $v9_tf32_mma with linespoints lw 1 title 'v9_tf32_mma'
