# A swept parameter against microseconds or VM exits per operation, one line per policy.
# Input (from sweep.sh): files, space-separated TSVs "x<TAB>y" (one per policy); titles,
# the policies in the same order; logx, 1 for a logarithmic x axis; outfile; xlab; ylab; ttl.
load dir."common.gp"
set key outside right top vertical Left reverse
set xlabel xlab noenhanced
set ylabel ylab noenhanced
set yrange [0:*]
if (logx) set logscale x 2
plot for [i=1:words(files)] word(files, i) using 1:2 with linespoints pointtype 7 linewidth 2 title word(titles, i)
