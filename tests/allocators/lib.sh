# lib.sh — shared by tests/e2e/alloc_*.sh (sourced, not run).
#
# Sets: build (the build directory), list (the registry lister),
# ours (names of our allocators). Our libraries are taken from this build
# (ALLOCRR_LIBDIR), never from an installed copy.
build=${ALLOCRR_BUILD:-build}
list="$build/tests/alloc_list"
export ALLOCRR_LIBDIR
ALLOCRR_LIBDIR=$(cd "$build/lib" 2>/dev/null && pwd) || ALLOCRR_LIBDIR="$build/lib"
ours="pool arena tlscache freelist"

# need FILE...: fail (exit 1) unless each built file exists; they come from `make`.
need() {
	for f in "$@"; do
		if [ ! -e "$f" ]; then
			echo "missing $f: build it with make first" >&2
			exit 1
		fi
	done
}

# preload_of NAME: the LD_PRELOAD value for NAME ("" for glibc); fails when
# NAME is not installed.
preload_of() {
	local line
	line=$("$list" | awk -F'\t' -v n="$1" '$1 == n')
	[ -n "$line" ] || { echo "unknown allocator $1" >&2; return 1; }
	[ "$(cut -f3 <<<"$line")" = 1 ] || { echo "$1 is not installed" >&2; return 1; }
	local p
	p=$(cut -f4 <<<"$line")
	[ "$p" = - ] && p=
	printf '%s\n' "$p"
}

# run_logged LABEL SHOW [VAR=VALUE]... CMD...: run CMD with those variables
# set (through env, so that only CMD gets an LD_PRELOAD, not timeout) for
# 300 s at most, its output kept aside: "ok   LABEL" (SHOW=1: then ": " and
# the output on one line), or "FAIL LABEL:" and the output's last 30 lines,
# counted in $failed.
run_logged() {
	local label=$1 show=$2 log
	shift 2
	log=$(mktemp)
	if timeout 300 env "$@" >"$log" 2>&1; then
		if [ "$show" = 1 ]; then
			echo "ok   $label: $(tr '\n' ';' <"$log")"
		else
			echo "ok   $label"
		fi
	else
		echo "FAIL $label:"
		sed 's/^/    /' "$log" | tail -n 30
		failed=$((failed + 1))
	fi
	rm -f "$log"
}

# need_program CMD PACKAGE: make sure CMD exists, installing PACKAGE with
# apt-get when running as root; otherwise skip the whole test (exit 77).
need_program() {
	command -v "$1" >/dev/null 2>&1 && return 0
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "installing $2 for $1"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null 2>&1
	fi
	command -v "$1" >/dev/null 2>&1 && return 0
	echo "skipped: $1 is not installed (apt-get install $2)"
	exit 77
}
