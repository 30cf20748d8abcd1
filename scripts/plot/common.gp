# Shared look of the vmxsim plots: PNG, readable at 900x560, names printed as given.
set terminal pngcairo size 900,560 noenhanced font "sans,10"
set output outfile
set datafile separator "\t"
set title ttl noenhanced
set grid ytics
set key noenhanced
