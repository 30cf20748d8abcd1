# harness fixture: exits in the middle
pass "before"
exit 3
