# apps/bench: seconds per epoch of every training experiment by device (the default setting: every experiment cut short (a few epochs; CPU epochs extrapolated from a few steps; the sweeps bounded) to finish in minutes, 2026-11-29 07:02 UTC).
# Run in this folder: gnuplot epoch_seconds.gp
# CPU: Intel(R) Xeon(R) Processor
# CPU threads: 16 used of 16 hardware threads
# BLAS: OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
# OS: Linux 6.18.44-fc-v657-gpu x86_64
# Compiler: 13.3.0
# Engine build: with the CUDA backend
# GPU: NVIDIA H200
# GPU SMs and memory: 132 SMs, compute capability 9.0, 140 GiB
# GPU clocks (maximum, CUDA runtime): SM 1980 MHz, memory 3201 MHz on a 6016-bit bus
# CUDA: driver API 13.0, runtime 13.0
# nvidia-smi (driver, SM clock now, max, memory clock, power limit): 580.159.04, 1980 MHz, 1980 MHz, 3201 MHz, 700.00 W
# cuBLAS / cuDNN (as --device cudnn loaded them): cuBLAS 13.1.0 + cuDNN 9.19.0
# PyTorch: 2.11.0+cu130, CUDA 13.0, cuDNN 91900, NVIDIA H200
reset
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set logscale y
set grid ytics
set key top left
set ylabel 'seconds per epoch (log scale)'
set xtics noenhanced rotate by -20
set title 'Time per epoch by device'
set bmargin 6
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1100,560 font ',10' } else { set terminal png size 1100,560 }
set output 'epoch_seconds.png'
plot 'epoch_seconds.dat' using 2:xtic(1) title columnheader(2) lc rgb '#1f77b4', \
     '' using 3 title columnheader(3) lc rgb '#d62728', \
     '' using 4 title columnheader(4) lc rgb '#2ca02c', \
     '' using 5 title columnheader(5) lc rgb '#aec7e8', \
     '' using 6 title columnheader(6) lc rgb '#ff9896', \
     '' using 7 title columnheader(7) lc rgb '#9467bd'
set output
set terminal svg size 1100,560 dynamic font ',10'
set output 'epoch_seconds.svg'
plot 'epoch_seconds.dat' using 2:xtic(1) title columnheader(2) lc rgb '#1f77b4', \
     '' using 3 title columnheader(3) lc rgb '#d62728', \
     '' using 4 title columnheader(4) lc rgb '#2ca02c', \
     '' using 5 title columnheader(5) lc rgb '#aec7e8', \
     '' using 6 title columnheader(6) lc rgb '#ff9896', \
     '' using 7 title columnheader(7) lc rgb '#9467bd'
set output
