#!/usr/bin/env bash
# fork without exec (the child records into its own PROG.CHILDPID.zst with
# fresh state), fork + exec (the new image gets its own trace unless
# --no-follow), and the parent's trace unaffected by either.
. "$(dirname "$0")/../progs/rec_testlib.sh"

count() { "$AT" dump "$1" | cut -d' ' -f3- | grep -c "^malloc $2 "; }

mkdir fork && cd fork
"$REC" -q "$P/rec_fork" fork >out.txt
expect_eq "fork: exit status" $? 0
child=$(awk '/^child/{print $2}' out.txt)
ct=$(one_trace "rec_fork.$child.zst")
pt=$(ls rec_fork.*.zst | grep -v "\.$child\.zst")
expect_eq "fork: traces" "$(ls | grep -c zst)" 2
for t in $ct $pt; do expect_eq "fork: verify $t" "$(verify_rc $t)" 0; done
expect_eq "fork: child mallocs of 1234" "$(count $ct 1234)" 5
expect_eq "fork: parent mallocs of 1234" "$(count $pt 1234)" 0
expect_eq "fork: parent malloc of 4321" "$(count $pt 4321)" 1
expect_eq "fork: child ppid" "$("$CHECK" info $ct | awk '/^ppid/{print $2}')" "${pt//[^0-9]/}"
expect_eq "fork: child threads" "$("$CHECK" info $ct | grep -c '^thread ')" 1
# The child's sequence restarts: its first event has a small seq.
first=$("$AT" dump $ct | head -1 | cut -d' ' -f1)
[ "$first" -lt 10 ] && ok "fork: child seq restarts ($first)" || fail "fork: child first seq $first"
"$CHECK" check $ct >/dev/null && ok "fork: child order" || fail "fork: child order"
cd ..

mkdir exec && cd exec
"$REC" -q "$P/rec_fork" exec >out.txt
expect_eq "exec: exit status" $? 0
child=$(awk '/^child/{print $2}' out.txt)
et=$(one_trace "rec_execd.$child.zst")
ft=$(one_trace "rec_fork.$child.zst")
expect_eq "exec: traces" "$(ls | grep -c zst)" 3
for t in $et $ft; do expect_eq "exec: verify $t" "$(verify_rc $t)" 0; done
expect_eq "exec: exec'ed image mallocs of 5555" "$(count $et 5555)" 3
expect_eq "exec: child before exec, malloc of 2222" "$(count $ft 2222)" 1
expect_eq "exec: exec'ed image cmdline" "$("$CHECK" info $et | sed -n 's/^cmdline //p')" "rec_execd execd"
cd ..

mkdir nofollow && cd nofollow
"$REC" -q --no-follow "$P/rec_fork" exec >out.txt
expect_eq "no-follow: exit status" $? 0
child=$(awk '/^child/{print $2}' out.txt)
expect_eq "no-follow: no trace of the exec'ed image" "$(ls | grep -c rec_execd)" 0
expect_eq "no-follow: traces" "$(ls | grep -c zst)" 2
cd ..

# A program with its own setenv/unsetenv (bash: over its variable table):
# -o still names the first process only, every exec'ed image gets its own
# trace, and --no-follow still stops at bash's children's exec.
mkdir bash && cd bash
"$REC" -q -o first.zst bash -c '/bin/true; /bin/true; tr -d x </proc/self/environ | tr "\0" "\n" | grep -c "^ALLOCRR_OUTPUT="; true' >out.txt
expect_eq "bash: exit status" $? 0
expect_eq "bash: ALLOCRR_OUTPUT seen by its children" "$(cat out.txt)" 0
expect_eq "bash: first.zst is bash's own" "$("$CHECK" info first.zst | sed -n 's/^cmdline //p' | cut -c1-7)" "bash -c"
expect_eq "bash: each exec'ed true has its trace" "$(ls true.*.zst 2>/dev/null | wc -l)" 2
for t in *.zst; do [ "$(verify_rc $t)" = 0 ] || fail "bash: $t does not verify"; done
rm -f ./*.zst
"$REC" -q --no-follow -o first.zst bash -c '/bin/true; tr -d x </proc/self/environ | tr "\0" "\n" | grep -c "liballocrr-rec"; true' >out.txt
expect_eq "bash --no-follow: the shim left LD_PRELOAD" "$(cat out.txt)" 0
expect_eq "bash --no-follow: no exec'ed image recorded" "$(ls true.*.zst tr.*.zst grep.*.zst 2>/dev/null | wc -l)" 0
cd ..
finish
