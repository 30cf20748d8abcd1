# VM exits by reason, one stacked bar per policy.
# Input (from plot.sh): datafile, a TSV with a header "policy<TAB>REASON...", one row per
# policy; ncols, its column count; outfile; ylab; ttl.
load dir."common.gp"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6
set key outside right top vertical Left reverse
set ylabel ylab
set yrange [0:*]
set xtics nomirror rotate by -20
plot for [i=2:ncols] datafile using i:xtic(1) title columnheader(i)
