# Stepping: step, step N, Enter repeats, next-exit [N], until, event explanations, the end.
event
step
event
step 5
step
event
next-exit
event

event
next-exit 2
event
step
event
until 12
event
step
event
step
event
s
e
n
e
u 24
e
continue
event
step
