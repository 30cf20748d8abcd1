# harness fixture: one check runs, one is skipped
pass "ran"
skip "the other half"
