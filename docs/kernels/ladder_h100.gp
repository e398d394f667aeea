# From docs/results/logs/2026-11-23_h100_kernel_bench.csv: apps/kernel_bench at 4096^3 and over the square sizes.
$ladder << EOD
0 "v3_smem_tiling" 6.26
1 "v4_blocktile_1d" 19.41
2 "v5_blocktile_2d" 18.69
3 "v6_vectorized" 36.94
4 "v7_warptile" 39.75
5 "v8_async_bigtile" 47.34
6 "v9_tf32_mma" 136.30
7 "v10_tf32_wgmma" 116.96
EOD
$cublas_fp32 << EOD
128 960.9
256 5214.2
512 21178.0
1024 39619.1
2048 49969.4
4096 51311.4
8192 51651.2
EOD
$cublas_tf32 << EOD
128 1156.3
256 6948.8
512 37507.8
1024 156249.0
2048 359147.0
4096 373605.0
8192 405616.0
EOD
$engine << EOD
128 1189.9
256 5867.8
512 12987.5
1024 26542.0
2048 36659.0
4096 47997.0
8192 47699.3
EOD
$engine_tf32 << EOD
128 1191.0
256 5864.5
512 18802.2
1024 56710.9
2048 102417.0
4096 136970.0
8192 138745.0
EOD
$v1_naive << EOD
128 59.3
256 229.7
512 491.5
1024 495.8
2048 489.7
EOD
$v2_coalesced << EOD
128 622.8
256 2756.2
512 6153.4
1024 6282.4
2048 6335.6
EOD
$v3_smem_tiling << EOD
128 586.2
256 2544.5
512 6097.9
1024 6610.4
2048 6705.4
4096 6256.0
8192 6340.1
EOD
$v4_blocktile_1d << EOD
128 317.0
256 1335.3
512 5387.1
1024 16074.0
2048 18702.4
4096 19408.7
8192 20039.4
EOD
$v5_blocktile_2d << EOD
128 260.9
256 1059.3
512 4205.7
1024 13992.7
2048 19138.4
4096 18693.2
8192 18257.3
EOD
$v6_vectorized << EOD
128 198.9
256 852.6
512 3576.3
1024 14060.1
2048 36410.4
4096 36939.3
8192 35317.0
EOD
$v7_warptile << EOD
128 229.5
256 1042.8
512 4429.8
1024 17458.1
2048 38640.5
4096 39751.3
8192 41164.2
EOD
$v8_async_bigtile << EOD
128 156.4
256 679.2
512 2867.5
1024 11454.0
2048 46059.6
4096 47335.8
8192 47691.2
EOD
$v9_tf32_mma << EOD
128 440.1
256 2387.5
512 11635.5
1024 50512.9
2048 116584.0
4096 136301.0
8192 137385.0
EOD
$v10_tf32_wgmma << EOD
128 498.2
256 1815.7
512 7964.9
1024 33734.9
2048 109076.0
4096 116959.0
8192 123752.0
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
     373.61 with lines dt 2 lw 2 title 'cublas_tf32 (373.6)'
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
     $v10_tf32_wgmma with linespoints lw 1 title 'v10_tf32_wgmma'
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
     373.61 with lines dt 2 lw 2 title 'cublas_tf32 (373.6)'
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
     $v10_tf32_wgmma with linespoints lw 1 title 'v10_tf32_wgmma'
