# VM exits by reason, one stacked bar per policy, the total written above each bar (so that a
# bar too small to see still shows its value).  No title: the caption file says what it shows.
# Input (from plot.sh): datafile, a TSV with a header "policy<TAB>REASON...", one row per
# policy (in the order their runs were stored); ncols, its column count; nrows, its rows; ylab; logy, 1 when
# the totals span more than 100x; ymax, the top of a linear axis; fmt and outfile (common.gp).
load dir."common.gp"
set ylabel ylab
set xtics nomirror scale 0 rotate by -30 font font_small
set key autotitle columnheader
keyed = ncols > 2 || logy                     # one reason needs no legend (but the dots' total does)
# the legend above the plot, outside it, in as few rows as its names allow
if (keyed) { set key at graph 0.5, graph 1.02 center bottom horizontal Left reverse maxcols 3 width -1 font font_small } else { unset key }
rows = keyed ? ceil((ncols - 1 + logy) / 3.0) : 0
set tmargin rows * 1.15 + 1.0
total(row) = sum [c=2:ncols] column(c)
if (logy) {
  # Stacked bars on a log axis would lie (a bar's length would not be its value, nor a segment's
  # its share): a paper prints a dot plot then, one dot per reason and policy and the total.
  set logscale y 10
  set format y "%g"
  set grid xtics ytics
  set xrange [-0.6 : nrows - 0.4]
  n = ncols - 1
  dx(i) = (i - 2 - (n - 1) / 2.0) * 0.4 / n   # the reasons of a policy side by side
  pos(v) = v > 0 ? v : NaN                    # a zero has no place on a log axis
  plot for [i=2:ncols] datafile using ($0 + dx(i)):(pos(column(i))) with points pt 7 ps 1.2 \
         lc rgb word(palette, (i - 2) % 8 + 1) title columnheader(i), \
       datafile using ($0):(total(0)):xtic(1) with points pt 6 ps 1.8 lc rgb "black" title "total"
} else {
  set style data histograms
  set style histogram rowstacked
  set style fill solid 0.9 border lc rgb "#333333"
  set boxwidth 0.6
  set yrange [0:ymax]
  plot for [i=2:ncols] datafile using i:xtic(1) lc rgb word(palette, (i - 2) % 8 + 1), \
       datafile using ($0):(total(0)):(sprintf("%.3g", total(0))) with labels offset 0,0.7 font font_small notitle
}
