# scripts/calibrate.py: the calibration points are met within 2 %, every fitted value lies in
# its documented range, and the values stored in the profiles are the fitted ones (so a model
# change that moves a calibration point fails here until it is recalibrated).
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

if ! command -v python3 >/dev/null 2>&1; then
  skip "python3 not found (scripts/calibrate.py needs it)"
else
  run python3 "$ROOT/scripts/calibrate.py" --vmxsim "$VMXSIM" --check
  check_rc "calibrate.py --check: points met, values plausible and stored" 0
  check_contains "calibration point A printed beside the model" "$out" "published      9.19 us"
  check_contains "calibration point D printed beside the model" "$out" "published   1032.97 us"
  check_contains "fitted values inside their ranges" "$out" "inside"
  check_contains "stored values are the fitted ones" "$out" "stored values are the fitted ones"
fi
