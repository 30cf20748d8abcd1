# harness fixture: skips the whole file
skip "tool missing"
return 0
fail "never reached"
