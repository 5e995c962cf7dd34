#!/usr/bin/env bash
# The Makefile's rules must not depend on the order the module files are
# read in: a prerequisite list is expanded when make reads it, so a module
# that names a variable another module defines later gets an empty
# prerequisite, which only a lucky parallel build hides (issue 13: a serial
# `make demo` failed to link bench_replay_compile). make's rule database
# (make -p) with the modules in their order, reversed, and rotated must be
# the same rules with the same prerequisites.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

modules=$(make -s --no-print-directory -f Makefile -f <(printf 'print-modules:\n\t@echo $(MODULES)\n') print-modules)
[ -n "$modules" ] || { echo "FAIL: no MODULES in the Makefile"; exit 1; }
read -r -a mods <<<"$modules"
reversed=$(printf '%s\n' "${mods[@]}" | tac | tr '\n' ' ')
rotated="${mods[*]:3} ${mods[*]:0:3}"

# rules ORDER: every explicit rule of make's database, "target: prereqs |
# order-only", each list sorted (the order of a rule's prerequisites can
# follow the reading order when several modules add to it; the set cannot).
rules() {
	# The goal is a rule of no prerequisites, so make reads every rule and
	# searches no implicit ones (whose visiting order would differ).
	make -pRr -f Makefile -f <(printf 'allocrr-nothing:\n') BUILD="$work/build" MODULES="$1" \
		allocrr-nothing 2>/dev/null |
		python3 -c '
import re, sys
rules, files = [], False
for line in sys.stdin:
    if line.startswith("# Files"): files = True
    elif line.startswith("# files hash-table stats"): files = False
    elif files and re.match(r"[^#\s][^=]*:", line) and not re.match(r"\S+ :?= ", line):
        target, _, rest = line.rstrip("\n").partition(":")
        normal, _, order_only = rest.partition("|")
        rules.append("%s: %s | %s" % (target, " ".join(sorted(normal.split())), " ".join(sorted(order_only.split()))))
print("\n".join(sorted(rules)))
' || true
}
rules "$modules" >"$work/given"
n=$(wc -l <"$work/given")
[ "$n" -gt 100 ] || { echo "FAIL: only $n rules in make's database"; exit 1; }
status=0
for order in "$reversed" "$rotated"; do
	rules "$order" >"$work/other"
	if ! diff -u "$work/given" "$work/other" >"$work/diff"; then
		echo "FAIL: modules read as '$order' give other rules:"
		head -n 40 "$work/diff"
		status=1
	fi
done
[ $status = 0 ] && echo "ok: $n rules, the same for ${#mods[@]} modules in 3 orders"
exit $status
