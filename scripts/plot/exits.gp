# VM exits by reason, one stacked bar per policy, the total written above each bar (so that a
# bar too small to see still shows its value).
# Input (from plot.sh): datafile, a TSV with a header "policy<TAB>REASON...", one row per
# policy; ncols, its column count; ttl (two lines), ylab; fmt and outfile (common.gp).
load dir."common.gp"
set label 1 ttl at screen 0.5, screen 0.975 center front font font_big
set style data histograms
set style histogram rowstacked
set style fill solid 0.9 border lc rgb "#333333"
set boxwidth 0.6
set ylabel ylab
set yrange [0:*]
set xtics nomirror scale 0 rotate by -30 font font_small
set key autotitle columnheader
keyed = ncols > 2                             # one reason needs no legend
if (keyed) { set key at graph 0.5, graph 1.03 center bottom horizontal Left reverse maxcols 3 width -1 font font_small } else { unset key }
set tmargin title_lines(ttl) * 1.25 + (keyed ? (ncols > 4 ? 3.4 : 2.2) : 0.8)
total(row) = sum [c=2:ncols] column(c)
plot for [i=2:ncols] datafile using i:xtic(1) lc rgb word(palette, (i - 2) % 8 + 1), \
     datafile using ($0):(total(0)):(sprintf("%.3g", total(0))) with labels offset 0,0.7 font font_small notitle
