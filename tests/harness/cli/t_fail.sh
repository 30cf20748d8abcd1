# harness fixture: one failing and one passing check
check_eq "equal" 1 2
pass "passes"
