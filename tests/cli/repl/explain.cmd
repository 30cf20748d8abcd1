# Why an event exited or not, under several policies (the `event` command).
until 8
event
next-exit
event
until 14
event
policy nocache
until 16
event
policy prevroots
until 16
event
policy cr3cache
set cr3_target_count 2
until 22
event
info cr3targets
policy ept+cr4mask+lazydr
until 11
event
until 13
event
until 18
event
step
event
step
event
next-exit
event
