# Guest and hypervisor time, one stacked bar per policy.
# Input (from plot.sh): datafile, a TSV "policy<TAB>guest<TAB>hypervisor" with a header;
# outfile; ylab; ttl.
load dir."common.gp"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6
set key outside right top vertical Left reverse
set ylabel ylab
set yrange [0:*]
set xtics nomirror rotate by -20
plot datafile using 2:xtic(1) title columnheader(2) linecolor rgb "#4c72b0", \
     "" using 3 title columnheader(3) linecolor rgb "#dd8452"
