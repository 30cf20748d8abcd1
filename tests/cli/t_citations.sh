# The tree cites only files it contains: every path of this repository that a document,
# a comment, a CPU profile, a policy or a script names (docs/..., models/..., sim/...,
# tests/..., traces/..., workloads/..., scripts/...) exists. Placeholders (NAME) and the
# worked example's new file (models/hv/dr_sticky.c, docs/architecture.md) are not files.

cd "$ROOT" || exit 1
# the tree's files: git's list in a checkout, else every file outside build directories
files() {
  git ls-files 2>/dev/null ||
    find . -path ./.git -prune -o -path './build*' -prune -o -type f -print | sed 's|^\./||'
}
cited=$(files | grep -E '\.(md|c|h|json|sh|py|gp|1)$' | grep -v '^tests/fuzz/corpus/' |
  xargs grep -ohE '(^|[^A-Za-z0-9_./-])(docs|models|sim|tests|traces|workloads|scripts)/[A-Za-z0-9_./-]*[A-Za-z0-9_]\.(md|c|h|json|sh|py|txt|gp|bin|dat|gz|xz)' |
  sed 's/^[^a-z]//' | sort -u | grep -v 'NAME' | grep -v '^models/hv/dr_sticky\.c$')
n=0 missing=""
for p in $cited; do
  n=$((n + 1))
  [ -e "$p" ] || missing="$missing $p"
done
check_eq "every one of the $n repository paths cited exists" "" "$missing"
