# From kb.csv in docs/results/logs/2026-11-25_h100_kernel_bench.tgz: apps/kernel_bench at 4096^3 and over the square sizes.
$ladder << EOD
0 "v3_smem_tiling" 6.24
1 "v4_blocktile_1d" 19.38
2 "v5_blocktile_2d" 18.59
3 "v6_vectorized" 36.79
4 "v7_warptile" 39.68
5 "v8_async_bigtile" 47.14
6 "v9_tf32_mma" 136.61
7 "v10_tf32_wgmma" 115.72
8 "v11_tf32_tma (A B^T)" 349.16
EOD
$cublas_fp32 << EOD
128 958.8
256 5294.5
512 21183.4
1024 39757.6
2048 48899.8
4096 51312.6
8192 50960.5
EOD
$cublas_tf32 << EOD
128 1137.8
256 6919.0
512 37710.1
1024 155435.0
2048 359580.0
4096 382387.0
8192 409933.0
EOD
$engine << EOD
128 1179.2
256 6005.6
512 12861.0
1024 26300.7
2048 36482.1
4096 47935.4
8192 47735.6
EOD
$engine_tf32 << EOD
128 1181.9
256 6000.4
512 18689.1
1024 56372.7
2048 231425.0
4096 307310.0
8192 339584.0
EOD
$v1_naive << EOD
128 58.8
256 229.0
512 487.0
1024 499.2
2048 482.6
EOD
$v2_coalesced << EOD
128 617.5
256 2739.6
512 6104.1
1024 6314.4
2048 6286.0
EOD
$v3_smem_tiling << EOD
128 582.0
256 2524.3
512 6121.3
1024 6641.8
2048 6647.5
4096 6235.3
8192 6318.6
EOD
$v4_blocktile_1d << EOD
128 315.9
256 1328.9
512 5368.7
1024 15898.8
2048 18574.3
4096 19384.7
8192 20006.1
EOD
$v5_blocktile_2d << EOD
128 260.2
256 1054.5
512 4178.4
1024 13794.2
2048 19075.9
4096 18594.8
8192 18238.1
EOD
$v6_vectorized << EOD
128 197.9
256 853.2
512 3576.1
1024 13808.4
2048 36506.9
4096 36791.2
8192 35636.2
EOD
$v7_warptile << EOD
128 226.8
256 1041.1
512 4404.7
1024 17269.4
2048 38690.6
4096 39676.0
8192 41478.9
EOD
$v8_async_bigtile << EOD
128 155.2
256 678.1
512 2863.9
1024 11370.5
2048 46111.0
4096 47143.0
8192 47708.1
EOD
$v9_tf32_mma << EOD
128 435.0
256 2403.6
512 11655.7
1024 50314.0
2048 117144.0
4096 136608.0
8192 140450.0
EOD
$v10_tf32_wgmma << EOD
128 491.7
256 1818.4
512 7840.2
1024 33168.0
2048 109521.0
4096 115717.0
8192 123143.0
EOD
$v11_tf32_tma__A_B_T_ << EOD
4096 349156.0
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
     51.31 with lines dt 2 lw 2 title 'cublas_fp32 (51.3)', \
     382.39 with lines dt 2 lw 2 title 'cublas_tf32 (382.4)'
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
     $v9_tf32_mma with linespoints lw 1 title 'v9_tf32_mma', \
     $v10_tf32_wgmma with linespoints lw 1 title 'v10_tf32_wgmma', \
     $v11_tf32_tma__A_B_T_ with linespoints lw 1 title 'v11_tf32_tma (A B^T)'
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
     51.31 with lines dt 2 lw 2 title 'cublas_fp32 (51.3)', \
     382.39 with lines dt 2 lw 2 title 'cublas_tf32 (382.4)'
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
     $v9_tf32_mma with linespoints lw 1 title 'v9_tf32_mma', \
     $v10_tf32_wgmma with linespoints lw 1 title 'v10_tf32_wgmma', \
     $v11_tf32_tma__A_B_T_ with linespoints lw 1 title 'v11_tf32_tma (A B^T)'
