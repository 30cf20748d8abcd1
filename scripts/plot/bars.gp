# Clustered horizontal bars: one cluster per table row (labelled on the left, read from
# the top), one bar per plotted column.  The charts of `vmxsim reproduce --plots`, which
# writes the inputs and runs this once per format.  Horizontal, so that the rows' long
# labels stay level and legible at one-column width.
# Input: datafile, a TSV with a header "label<TAB>SERIES..." and one row per cluster (a
# "|" in a label breaks the line); rows and n, the number of clusters and of series;
# marks, the number of calibration points in markfile, a TSV "y<TAB>value<TAB>published"
# after a header line (autotitle columnheader takes every file's first line)
# (y: the bar's position); vmin, vmax, vpos (the smallest positive value); logx, 1 for a
# logarithmic value axis (the caller decides: values spanning more than a factor of 100);
# vlab (the value axis label, with its unit); fmt and outfile (common.gp).  No title: the
# caller writes the caption beside the figure.
# Bars on a linear axis from zero; on a log axis a dot per value instead: a bar's length
# there would depend on where the axis happens to start, so a paper prints a dot plot.
load dir."common.gp"
keyed = !(n == 1 && marks == 0)               # a single series needs no legend
# the legend above the plot, outside it: two entries a row (the row labels narrow the plot)
set tmargin keyed ? ceil((n + (marks > 0)) / 2.0) * 1.15 + 0.8 : 0.8
set xlabel vlab
set style fill solid 0.9 border lc rgb "#333333"
set key autotitle columnheader
h = 0.8 / n                                   # a bar's thickness; a cluster takes 0.8
set yrange [-0.6 : rows - 0.4]
set ytics scale 0 font font_small
set grid noytics xtics lc rgb "#e0e0e0"
if (logx) { set grid ytics }                   # dots: a line to each row's label guides the eye
set border 3
if (logx) {
  set logscale x 10
  set format x "%g"
  base = vpos / 2.5
  set xrange [base : vmax * 2.5]
} else {
  base = 0
  set xrange [(vmin < 0 ? vmin * 1.2 : 0) : vmax * 1.2]
  # at most five ticks at 1, 2 or 5 times a power of ten, so that wide numbers do not collide
  nice(x) = (e = 10 ** floor(log10(x)), f = x / e, (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * e)
  set xtics nice((vmax * 1.2 - (vmin < 0 ? vmin * 1.2 : 0)) / 4)
}
if (keyed) {                                  # just above the plot, under the title
  set key at graph 0.5, graph 1.02 center bottom horizontal Left reverse maxcols 2 width -1 font font_small
} else {
  unset key
}
# The first row at the top; series i of a cluster below series i-1.
y(i) = rows - 1 - $0 + ((n - 1) / 2.0 - i) * h
# "|" in a row label: a line break
lines(s) = strstrt(s, "|") ? s[1:strstrt(s, "|") - 1] . "\n" . lines(s[strstrt(s, "|") + 1:]) : s
# A bar under 3% of the axis would be a sliver on a linear scale, and a zero has no bar on
# either: their values are written beside them, so that no bar goes unseen.
tiny(v) = v == 0 ? "0" : (!logx && abs(v) < 0.03 * vmax ? sprintf("%.3g", v) : "")
bars = "plot for [i=0:n-1] datafile using (base):(y(i)):(base):(column(i+2)):(y(i)-h/2):(y(i)+h/2) " . \
       "with boxxyerror lc rgb word(palette, i+1) title columnheader(i+2), "
# dots: a zero or negative value has no place on a log axis; tiny() writes it
pos(v) = v > 0 ? v : NaN
dots = "plot for [i=0:n-1] datafile using (pos(column(i+2))):(y(i)) " . \
       "with points pt 7 ps 1.1 lc rgb word(palette, i+1) title columnheader(i+2), "
series = (logx ? dots : bars) . \
         "for [i=0:n-1] datafile using (column(i+2) > base ? column(i+2) : base):(y(i)):(tiny(column(i+2))) " . \
         "with labels left offset 0.4,0 font font_tiny notitle, " . \
         "datafile using (base):(rows - 1 - $0):ytic(lines(strcol(1))) with points pt -1 notitle"
calib = ", markfile using 3:1 with points pt 13 ps 1.2 lc rgb 'black' title '* published', " . \
        "markfile using 2:1:('*') with labels left offset 0.6,0 font font_mark notitle"
if (marks > 0) { eval(series . calib) } else { eval(series) }
