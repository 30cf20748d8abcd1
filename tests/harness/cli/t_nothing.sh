# harness fixture: asserts nothing
: nothing
