# Errors print one line and the session goes on.
frobnicate
step x
step 0
step 1 2
next-exit -1
until
until 1x
break
break nowhere
break exit NOT_A_REASON
break event cr5w
break at
break cr3 zz
break mark abcdefghijklmnopq
delete
delete 7
delete x
info
info frob
history 0
history x
info vmcs NOT_A_FIELD
info vmcs 0x1234
info regs extra
help nosuch
policy nosuch
set nosuch_knob 1
set cr3_target_count 9
set cr3_target_count
policy
until 5
until 3
continue
step
next-exit
event
