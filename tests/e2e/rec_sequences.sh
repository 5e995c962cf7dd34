#!/usr/bin/env bash
# The trace holds exactly the program's own heap calls, in order: a fixed
# single-thread sequence, every aligned-allocation function including
# failures, realloc chains including realloc(NULL, n) and realloc(p, 0).
# Also: -o with %p, trace mode 0600, results seen by the program unchanged.
. "$(dirname "$0")/../progs/rec_testlib.sh"

# Lines from the first to the last expected line, taken from the trace dump.
between() { awk -v f="$2" -v l="$3" '$0==f{on=1} on{print} on&&$0==l{exit}' "$1"; }

for prog in rec_seq rec_aligned rec_realloc; do
	"$REC" -q -o "$W/$prog.%p.zst" "$P/$prog" >"$prog.out" 2>"$prog.err"
	expect_eq "$prog exit status" $? 0
	f=$(one_trace "$prog.[0-9]*.zst")
	expect_eq "$prog trace mode" "$(stat -c %a "$f")" 600
	pid=${f#$prog.}; pid=${pid%.zst}
	expect_eq "$prog verify" "$(verify_rc "$f")" 0
	# The expected lines are everything after "--" (rec_seq: after "pid N").
	if [ $prog = rec_seq ]; then
		sed '1d' "$prog.out" >"$prog.exp"
		expect_eq "$prog pid line" "$(head -1 $prog.out)" "pid $pid"
		tids=$("$AT" dump "$f" | awk '{print $2}' | sort -u)
		expect_eq "$prog thread ids" "$tids" "$pid"
	else
		sed '1,/^--$/d' "$prog.out" >"$prog.exp"
		# What the program saw (return codes, errno) is the same unrecorded.
		"$P/$prog" >"$prog.bare" 2>&1
		expect_eq "$prog results" "$(sed '/^--$/q' "$prog.out")" "$(sed '/^--$/q' "$prog.bare")"
	fi
	dump3 "$f" >"$prog.dump"
	between "$prog.dump" "$(head -1 "$prog.exp")" "$(tail -1 "$prog.exp")" >"$prog.got"
	if diff -u "$prog.exp" "$prog.got" >"$prog.diff"; then
		ok "$prog: trace has exactly the program's $(wc -l <"$prog.exp") calls in order"
	else
		fail "$prog: trace differs from the program's calls"; cat "$prog.diff"
	fi
	"$CHECK" check "$f" >"$prog.check" || { fail "$prog: rec_tracecheck check"; cat "$prog.check"; }
	# Failures keep their error code (SPEC 5.3): what the call returned or
	# set errno to; realloc(p, 0) returning NULL freed p and carries none.
	"$AT" dump "$f" --extra | awk '$NF ~ /^(err=|seq2=|t=)/ && / = 0x0 /' |
		sed 's/ t=[0-9]*//; s/ seq2=[0-9]*//' | cut -d' ' -f3- >"$prog.errs"
	case $prog in
	rec_aligned)
		expect_eq "$prog: error codes" "$(awk '{print $1, $NF}' "$prog.errs" | tr '\n' ';')" \
			"posix_memalign err=22;posix_memalign err=12;aligned_alloc err=12;memalign err=12;valloc err=12;calloc err=12;" ;;
	rec_realloc)
		expect_eq "$prog: error codes" "$(awk '{print $1, ($NF ~ /^err=/ ? $NF : "none")}' "$prog.errs" | tr '\n' ';')" \
			"realloc none;reallocarray err=12;realloc err=12;" ;;
	esac
done
finish
