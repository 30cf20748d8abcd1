# The look every vmxsim chart shares: sized for one column of a two-column paper (3.5 in),
# with fonts that stay legible there (8 pt in the PDF; the PNG and SVG in the same
# proportion), a colour-blind-safe palette (Okabe and Ito), no grey box around the plot.
# Input: fmt ("png", "svg" or "pdf"; default png) and outfile, set by the caller.
if (!exists("fmt")) fmt = "png"
# fs: the font size in points; font_small, font_tiny, font_mark: derived sizes.
fs = (fmt eq "pdf") ? 8 : 16
if (fmt eq "pdf") {
  set terminal pdfcairo size 3.5in,2.8in font "DejaVu Sans,8" linewidth 1.2 rounded noenhanced
} else {
  if (fmt eq "svg") {
    set terminal svg size 700,560 font "DejaVu Sans,16" linewidth 2 rounded noenhanced background "white"
  } else {
    set terminal pngcairo size 700,560 font "DejaVu Sans,16" linewidth 2 rounded noenhanced
  }
}
font_small = sprintf(",%d", fs - 1)      # legends, tick labels
font_tiny = sprintf(",%d", fs - 3)       # values written above bars
font_mark = sprintf(",%d", fs + 2)       # the calibration asterisk
set output outfile
set datafile separator "\t"
set encoding utf8
set key noenhanced
set border 3 lc rgb "#444444"
set tics nomirror textcolor rgb "#222222"
set grid ytics lc rgb "#e0e0e0" lw 1 dt 1
set key samplen 1.5 spacing 1.1
palette = "#0072B2 #E69F00 #009E73 #D55E00 #CC79A7 #56B4E9 #F0E442 #000000"
# No titles inside the figures: a paper puts them in the caption, and the callers write
# one beside each figure (OUT.caption.txt).
