# Guest and hypervisor time, one stacked bar per policy, the total written above each bar.
# No title: the caption file says what it shows.
# Input (from plot.sh): datafile, a TSV "policy<TAB>guest<TAB>hypervisor" with a header;
# nrows, its rows; ylab; logy, 1 when the totals span more than 100x; ymax, the top of a linear axis; fmt
# and outfile (common.gp).
load dir."common.gp"
set ylabel ylab
set xtics nomirror scale 0 rotate by -30 font font_small
set key autotitle columnheader
set key at graph 0.5, graph 1.02 center bottom horizontal Left reverse width -1 font font_small
set tmargin 2.2
if (logy) {
  # Stacked bars on a log axis would lie about the split: a dot plot (guest, hypervisor,
  # total) is what a paper prints when one policy costs a hundred times another.
  set logscale y 10
  set format y "%g"
  set grid xtics ytics
  set xrange [-0.6 : nrows - 0.4]
  pos(v) = v > 0 ? v : NaN
  plot datafile using ($0 - 0.1):(pos($2)) with points pt 7 ps 1.2 lc rgb word(palette, 1) title columnheader(2), \
       "" using ($0 + 0.1):(pos($3)) with points pt 7 ps 1.2 lc rgb word(palette, 2) title columnheader(3), \
       "" using ($0):($2 + $3):xtic(1) with points pt 6 ps 1.8 lc rgb "black" title "total"
} else {
  set style data histograms
  set style histogram rowstacked
  set style fill solid 0.9 border lc rgb "#333333"
  set boxwidth 0.6
  set yrange [0:ymax]
  plot datafile using 2:xtic(1) lc rgb word(palette, 1), \
       "" using 3 lc rgb word(palette, 2), \
       "" using ($0):($2 + $3):(sprintf("%.3g", $2 + $3)) with labels offset 0,0.7 font font_small notitle
}
