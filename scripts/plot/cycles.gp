# Guest and hypervisor time, one stacked bar per policy, the total written above each bar.
# Input (from plot.sh): datafile, a TSV "policy<TAB>guest<TAB>hypervisor" with a header;
# ttl (two lines), ylab; fmt and outfile (common.gp).
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
set key at graph 0.5, graph 1.03 center bottom horizontal Left reverse width -1 font font_small
set tmargin title_lines(ttl) * 1.25 + 2.2
plot datafile using 2:xtic(1) lc rgb word(palette, 1), \
     "" using 3 lc rgb word(palette, 2), \
     "" using ($0):($2 + $3):(sprintf("%.3g", $2 + $3)) with labels offset 0,0.7 font font_small notitle
