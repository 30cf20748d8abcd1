# A swept parameter against microseconds or VM exits per operation, one line per policy.
# Input (from sweep.sh): files, space-separated TSVs "x<TAB>y" (one per policy); titles,
# the policies in the same order; logx, 1 for a logarithmic x axis; xlab; ylab; ttl (the
# title, two lines); integer, 1 when every x value is a whole number (ticks at the data's
# values then, not between them); xtics, those values comma-separated; fmt and outfile
# (common.gp).
load dir."common.gp"
set label 1 ttl at screen 0.5, screen 0.975 center front font font_big
set tmargin title_lines(ttl) * 1.25 + 0.8
set xlabel xlab noenhanced
set ylabel ylab noenhanced
set yrange [0:*]
set grid xtics ytics
if (logx) { set logscale x 2 }
if (integer) { eval "set xtics (".xtics.")" }
# several lines: the key under the plot, so that long policy names leave the plot its width
if (words(files) > 1) { set key below horizontal Left reverse font font_small maxcols 2 } else { unset key }
plot for [i=1:words(files)] word(files, i) using 1:2 with linespoints pt 7 ps 1.2 lw 2 \
     lc rgb word(palette, (i - 1) % 8 + 1) title word(titles, i)
