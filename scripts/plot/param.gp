# Microseconds per operation against a workload parameter, one line per policy.  No title:
# the caption file says what it shows.
# Input (from plot.sh): files, space-separated TSVs "x<TAB>us" (one per policy); titles, the
# policies in the same order, tab-separated; logx and logy, 1 for a logarithmic axis
# (plot.sh decides: the values span more than 100x); integer, 1 when every x value is a
# whole number, and xtics, those values comma-separated; xlab; fmt and outfile (common.gp).
load dir."common.gp"
set xlabel xlab
set ylabel "µs per operation"
if (logx) { set logscale x 2 }
if (logy) { set logscale y 10; set format y "%g" } else { set yrange [0:*] }
if (integer) { eval "set xtics (".xtics.")" }
set grid xtics ytics
n = words(files)
title_at(s, k) = k <= 1 ? (strstrt(s, "\t") ? s[1:strstrt(s, "\t") - 1] : s) : title_at(s[strstrt(s, "\t") + 1:], k - 1)
# the legend under the plot, outside it, three names a row (they are at most 14 characters)
if (n > 1) { set key below horizontal Left reverse maxcols 3 width 0 font font_small } else { unset key }
plot for [i=1:n] word(files, i) using 1:2 with linespoints pt 7 ps 1.2 lw 2 \
     lc rgb word(palette, (i - 1) % 8 + 1) title title_at(titles, i)
