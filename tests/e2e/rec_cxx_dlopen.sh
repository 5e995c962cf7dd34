#!/usr/bin/env bash
# C++ new/delete reach the trace through malloc/aligned_alloc/free; a library
# loaded with dlopen is recorded, and with --stacks its allocations carry
# interned stacks that symbolise (function, file:line) through the module map
# (with build-ids) that the recorder extends after dlopen.
. "$(dirname "$0")/../progs/rec_testlib.sh"

"$REC" -q "$P/rec_cxx" >out.txt
expect_eq "c++: exit status" $? 0
expect_eq "c++: output" "$(cat out.txt)" "$("$P/rec_cxx")"
f=$(one_trace "rec_cxx.*.zst")
expect_eq "c++: verify" "$(verify_rc $f)" 0
dump3 $f >dump.txt
grep -q '^malloc 4 = ' dump.txt && ok "c++: new int" || fail "c++: no malloc 4 (new int)"
grep -q '^malloc 400 = ' dump.txt && ok "c++: new int[100]" || fail "c++: no malloc 400 (new int[100])"
grep -q '^aligned_alloc 64 128 = ' dump.txt && ok "c++: aligned new" || fail "c++: no aligned_alloc 64 128"
grep -q '^malloc 5001 = ' dump.txt && ok "c++: std::string" || fail "c++: no malloc 5001"
"$CHECK" check $f >/dev/null && ok "c++: order" || fail "c++: order"
rm -f rec_cxx.*.zst

# With stacks, C++ frames print demangled (operator new, not _Znwm).
"$REC" -q --stacks "$P/rec_cxx" >/dev/null
f=$(one_trace "rec_cxx.*.zst")
"$AT" stacks $f >cxx_stacks.txt
grep -q 'operator new(unsigned long)' cxx_stacks.txt && ok "c++ stacks: demangled operator new" \
	|| { fail "c++ stacks: no demangled operator new"; head -40 cxx_stacks.txt; }
grep -q '_Znwm' cxx_stacks.txt && fail "c++ stacks: mangled name left" || ok "c++ stacks: no mangled names"

"$REC" -q "$P/rec_dlopen" "$P/librec_dllib.so" >out.txt
expect_eq "dlopen: exit status" $? 0
f=$(one_trace "rec_dlopen.*.zst")
expect_eq "dlopen: mallocs of 3333" "$(dump3 $f | grep -c '^malloc 3333 ')" 10
rm -f rec_dlopen.*.zst

"$REC" -q --stacks=16 "$P/rec_dlopen" "$P/librec_dllib.so" >out.txt
expect_eq "dlopen --stacks: exit status" $? 0
f=$(one_trace "rec_dlopen.*.zst")
expect_eq "dlopen --stacks: verify" "$(verify_rc $f)" 0
"$CHECK" info $f >info.txt
expect_eq "stacks flag in header" "$(awk '/^flags/{print $2}' info.txt)" 1
grep -q 'module .*/librec_dllib.so .*build_id_len 20' info.txt && ok "module map has the dlopen'ed library with its build-id" \
	|| { fail "module map lacks librec_dllib.so"; cat info.txt; }
# Each distinct stack once: 10 identical allocations share one stack id.
ids=$("$AT" dump "$f" --extra | awk '$3=="malloc" && $4==3333' | grep -o 'stack=[0-9]*' | sort -u | wc -l)
expect_eq "dlopen --stacks: distinct stacks of the 10 mallocs" "$ids" 1
nst=$(awk '/^stacks/{print $2}' info.txt)
"$AT" stacks $f >stacks.txt
expect_eq "stack records in the trace" "$(grep -c '^stack ' stacks.txt)" "$nst"
grep -q 'dllib_alloc+0x[0-9a-f]* (tests/progs/rec_dllib.c:[0-9]*) \[librec_dllib.so' stacks.txt && \
	ok "symbolised: dllib_alloc with file:line" || { fail "dllib_alloc not symbolised"; cat stacks.txt; }
grep -q 'main+0x[0-9a-f]* (tests/progs/rec_dlopen.c:[0-9]*)' stacks.txt && ok "symbolised: main" || fail "main not symbolised"
# dump --stacks: each malloc 3333 line is followed by its frames.
"$AT" dump "$f" --stacks >dump_stacks.txt
n=$(grep -A1 ' malloc 3333 = ' dump_stacks.txt | grep -c 'dllib_alloc+0x')
expect_eq "dump --stacks: frames under each malloc 3333" "$n" 10
finish
