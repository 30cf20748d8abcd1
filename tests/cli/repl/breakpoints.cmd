# Breakpoints of every kind; continue (Enter repeats it, not the older step), delete, the list with
# hit counts; a restart keeps them.
breakpoints
break exit CR_ACCESS
break event touch
break at 15
break cr3 0x3000
break mark iteration
b mark
breakpoints
step 2
continue

continue
continue
continue
continue
breakpoints
delete 2
delete 1
bl
continue
continue
continue
continue
policy nocache
breakpoints
break exit EXCEPTION_NMI
b exit 12
continue
continue
delete all
breakpoints
continue
