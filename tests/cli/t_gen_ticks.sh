# `vmxsim gen lat_ctx --hz`: the 2007 guest's timer ticks (IRQ 0 through the 8259), how many the
# trace holds for its guest time, and what a replay on core2-2007 makes of them.

# count NAME: the number after NAME in `trace info` output ($out), or 0
count() { printf '%s\n' "$out" | awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }'; }
# exit_col REASON COLUMN: a column of REASON's row in a replay's table ($out): 2 count, 5 average cycles
exit_col() { printf '%s\n' "$out" | awk -v r="$1" -v c="$2" '$1 == r { print $c; f = 1 } END { if (!f) print 0 }'; }

# Without --hz the trace has no tick: no interrupt, no port access.
run "$VMXSIM" gen lat_ctx --procs 2 --size 0 --iters 2000 --paging 32 -o plain.bin
check_rc "lat_ctx without --hz generates" 0
run "$VMXSIM" trace info plain.bin
check_eq "no --hz: no virq" 0 "$(count virq)"
check_eq "no --hz: no io" 0 "$(count io)"
check_not_contains "no --hz: no hz in the metadata" "$out" '"hz"'

# --hz 1000 at 2.4 GHz: a tick every 2,400,000 native cycles of the 4000 switches' time.
run "$VMXSIM" gen lat_ctx --procs 2 --size 0 --iters 2000 --paging 32 --hz 1000 -o hz.bin
check_rc "lat_ctx --hz 1000 generates" 0
run "$VMXSIM" trace info hz.bin
cycles=$(count cycles:)
ticks=$((cycles / 2400000))
check_eq "--hz 1000: native time unchanged by the ticks" 19392000 "$cycles"
check_eq "--hz 1000: one virq per 1 ms of guest time" "$ticks" "$(count virq)"
check_eq "--hz 1000: 4 port accesses per tick (the 8259's IMR and EOI)" $((4 * ticks)) "$(count io)"
check_eq "--hz 1000: one iret per tick" "$ticks" "$(count iret)"
check_contains "--hz in the metadata" "$out" '"hz": 1000'

# --tick-stretch 10: the run takes 10 times its native time, so 10 times as many ticks.
run "$VMXSIM" gen lat_ctx --procs 2 --size 0 --iters 2000 --paging 32 --hz 1000 --tick-stretch 10 -o st.bin
check_rc "lat_ctx --tick-stretch 10 generates" 0
run "$VMXSIM" trace info st.bin
check_eq "--tick-stretch 10: a tick every 240,000 native cycles" $((cycles / 240000)) "$(count virq)"
check_eq "--tick-stretch 10: 4 port accesses per tick" $((4 * (cycles / 240000))) "$(count io)"

# A replay on the 2007 host: each tick an EXTERNAL_INTERRUPT exit, each port access an
# IO_INSTRUCTION exit, both a round trip to qemu (handler 16000 cycles, core2-2007).
run "$VMXSIM" --no-db --policy shadowcache --cpu core2-2007 hz.bin
check_rc "replay of the ticked trace" 0
check_eq "replay: one EXTERNAL_INTERRUPT exit per tick" "$ticks" "$(exit_col EXTERNAL_INTERRUPT 2)"
check_eq "replay: one IO_INSTRUCTION exit per port access" $((4 * ticks)) "$(exit_col IO_INSTRUCTION 2)"
io_avg=$(exit_col IO_INSTRUCTION 5)
intr_avg=$(exit_col EXTERNAL_INTERRUPT 5)
# the round trip (1680) and the handler (16000), plus under 1000 of VMREADs and debug registers
check_eq "replay: an I/O exit costs a qemu round trip (got $io_avg cycles)" 1 $((io_avg >= 17680 && io_avg < 18680))
check_eq "replay: a tick's exit costs a qemu round trip (got $intr_avg cycles)" 1 \
  $((intr_avg >= 17680 && intr_avg < 19680))

# Bad values name the option.
run "$VMXSIM" gen lat_ctx --procs 2 --iters 2 --hz 20000 -o bad.bin
check_rc "--hz above 10000" 2
check_contains "--hz above 10000 named" "$err" "--hz"
run "$VMXSIM" gen lat_ctx --procs 2 --iters 2 --vcpus 2 --hz 1000 -o bad.bin
check_rc "--hz with 2 vCPUs" 2
check_contains "--hz with 2 vCPUs says why" "$err" "--vcpus 1"
run "$VMXSIM" gen lat_ctx --procs 2 --iters 2 --hz 1000 --tick-stretch 0.5 -o bad.bin
check_rc "--tick-stretch below 1" 2
check_contains "--tick-stretch below 1 named" "$err" "--tick-stretch"
run "$VMXSIM" gen lat_ctx --procs 2 --iters 2 --hz 1000 --tick-stretch nan -o bad.bin
check_rc "--tick-stretch nan" 2
