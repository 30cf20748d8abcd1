# Microseconds per operation against a workload parameter, one line per policy.
# Input (from plot.sh): files, space-separated TSVs "x<TAB>us" (one per policy); titles, the
# policies in the same order; logx and logy, 1 for a logarithmic axis (plot.sh decides: the
# values span a factor of 8 or more for x, more than 10 for y); ttl (two lines), xlab;
# fmt and outfile (common.gp).
load dir."common.gp"
set label 1 ttl at screen 0.5, screen 0.975 center front font font_big
set tmargin title_lines(ttl) * 1.25 + 0.8
set xlabel xlab
set ylabel "µs per operation"
if (logx) { set logscale x 2 }
if (logy) { set logscale y 10; set format y "%g" } else { set yrange [0:*] }
set grid xtics ytics
if (words(files) > 1) { set key outside right top vertical Left reverse font font_small } else { unset key }
plot for [i=1:words(files)] word(files, i) using 1:2 with linespoints pt 7 ps 1.2 lw 2 \
     lc rgb word(palette, (i - 1) % 8 + 1) title word(titles, i)
