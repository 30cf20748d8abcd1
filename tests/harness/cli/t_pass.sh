# harness fixture: two passing checks
check_eq "equal" a a
check_contains "contains" abc b
