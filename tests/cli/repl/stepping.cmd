# Stepping: step, step N (each event shown), Enter repeats the last command (not an older one),
# next-exit [N], until, event explanations, the end, history.
event
step
event
step 5
step
event
next-exit

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
step 2
continue
event
step
history 4
