#!/usr/bin/env bash
# Wrapper scripts and the process tree of a recording. A /bin/sh script
# execs /usr/bin/env, which execs rec_fork (the program the user meant),
# which forks a child: `allocrec --output-for rec_fork -o FILE` must put
# rec_fork's image, and only it, in FILE, the wrappers in PROG.PID.zst;
# `alloctrace tree` must show the exec chain under one pid and the fork
# child under the image that forked it, in text and in JSON; a NAME that
# never runs is a warning listing the traces and exit 2; hostile command
# lines, file names and manifest lines come out escaped.
. "$(dirname "$0")/../progs/rec_testlib.sh"

count() { "$AT" dump "$1" | cut -d' ' -f3- | grep -c "^malloc $2 "; }
hdr() { "$CHECK" info "$1" | sed -n "s/^$2 //p"; }

cat >wrap.sh <<EOF
#!/bin/sh
exec /usr/bin/env "$P/rec_fork" fork
EOF
chmod +x wrap.sh

# ---- 1. -o names the image the user meant --------------------------------------------
mkdir chain
"$REC" --output-for rec_fork -o chain/out.zst ./wrap.sh >out.txt 2>err.txt
expect_eq "chain: exit status" $? 0
child=$(awk '/^child/{print $2}' out.txt)
pid=$(hdr chain/out.zst pid)
expect_eq "chain: -o holds rec_fork's image" "$(hdr chain/out.zst cmdline)" "$P/rec_fork fork"
expect_eq "chain: -o holds its one malloc of 4321" "$(count chain/out.zst 4321)" 1
expect_eq "chain: and not the child's mallocs of 1234" "$(count chain/out.zst 1234)" 0
sh=$(one_trace "chain/sh.$pid.zst")
envt=$(one_trace "chain/env.$pid.zst")
ct=$(one_trace "chain/rec_fork.$child.zst")
expect_eq "chain: the wrappers' cmdlines" "$(hdr $sh cmdline) | $(hdr $envt cmdline)" \
	"/bin/sh ./wrap.sh | /usr/bin/env $P/rec_fork fork"
expect_eq "chain: the fork child's 5 mallocs of 1234" "$(count $ct 1234)" 5
expect_eq "chain: the child's parent" "$(hdr $ct ppid)" "$pid"
expect_eq "chain: 4 traces in all" "$(ls chain | wc -l)" 4
for t in chain/*.zst; do [ "$(verify_rc $t)" = 0 ] || fail "chain: $t does not verify"; done
expect_eq "chain: no wrapper holds the malloc of 4321" "$(count $sh 4321)$(count $envt 4321)" 00
grep -q "^allocrec: $W/chain/out.zst is the trace of the first image named 'rec_fork' (pid $pid): $P/rec_fork fork;" \
	err.txt && ok "chain: the summary says which image -o holds" || fail "chain: summary: $(cat err.txt)"
grep -q "^allocrec: next: allocreplay $W/chain/out.zst --all   (or: alloctrace stats $W/chain/out.zst)$" err.txt &&
	ok "chain: the next command names -o's trace, not the wrapper's" || fail "chain: next: $(grep 'next:' err.txt)"

# A glob, and the executable's name when argv[0] differs (python3 runs
# python3.11): argv[0] "alias" but the image is rec_fork.
mkdir glob && ln -s "$P/rec_fork" glob/alias
"$REC" -q --output-for 'rec_f*' -o glob/g.zst sh -c 'exec ./glob/alias fork' >out.txt 2>err.txt
expect_eq "glob: exit status" $? 0
expect_eq "glob: matched by the executable's name" "$(count glob/g.zst 4321)" 1
expect_eq "glob: -q prints nothing" "$(cat err.txt)" ""
"$REC" -q --output-for '[!s]h' -o glob/n.zst sh -c 'exec ./glob/alias fork' >out.txt 2>err.txt
expect_eq "glob: a set that excludes sh matches nothing: exit" $? 2

# More images before the one meant than the summary lists (64): pyenv's
# python3 shim runs about 80.
mkdir many
"$REC" --output-for rec_fork -o many/m.zst sh -c 'for i in $(seq 70); do /bin/true; done; exec '"$P/rec_fork"' fork' \
	>out.txt 2>err.txt
expect_eq "many: exit status" $? 0
expect_eq "many: -o holds rec_fork's image" "$(count many/m.zst 4321)" 1
expect_eq "many: each true has its trace" "$(ls many/true.*.zst | wc -l)" 70
grep -q "^allocrec: $W/many/m.zst is the trace of the first image named 'rec_fork'" err.txt &&
	ok "many: the summary finds it past the 64th trace" || fail "many: $(tail -n 2 err.txt)"

# ---- 2. a NAME that never ran ------------------------------------------------------------
mkdir none
"$REC" --output-for python9 -o none/py.zst ./wrap.sh >out.txt 2>err.txt
expect_eq "never ran: exit status 2 (PROG succeeded, -o's trace does not exist)" $? 2
[ -e none/py.zst ] && fail "never ran: none/py.zst exists" || ok "never ran: no -o file"
grep -q "^allocrec: none/py.zst: not written: no image named 'python9' ran" err.txt &&
	ok "never ran: the warning" || fail "never ran: $(cat err.txt)"
expect_eq "never ran: the traces listed" "$(grep -c "^allocrec:   $W/none/.*(pid [0-9]*): " err.txt)" 4
expect_eq "never ran: every image still recorded" "$(ls none | wc -l)" 4
"$REC" -q --output-for python9 -o none/py.zst sh -c 'exit 3' >out.txt 2>err.txt
expect_eq "never ran, PROG failed: PROG's status" $? 3
grep -q "no image named 'python9' ran" err.txt && ok "never ran: warned even with -q" || fail "-q: $(cat err.txt)"
rc=$("$REC" --output-for rec_fork ./wrap.sh >/dev/null 2>err.txt; echo $?)
expect_eq "--output-for without -o: usage error" "$rc" 1
rc=$("$REC" --output-for /usr/bin/env -o x.zst ./wrap.sh >/dev/null 2>err.txt; echo $?)
expect_eq "--output-for with a path: usage error" "$rc" 1
grep -q "not a path" err.txt && ok "--output-for path: says why" || fail "--output-for path: $(cat err.txt)"

# ---- 3. alloctrace tree ---------------------------------------------------------------------
"$AT" tree chain >tree.txt 2>err.txt
expect_eq "tree: exit status" $? 0
expect_eq "tree: no messages" "$(cat err.txt)" ""
cat >want.txt <<EOF
$pid (ppid PPID) /bin/sh ./wrap.sh  [chain/sh.$pid.zst: EV
$pid exec /usr/bin/env $P/rec_fork fork  [chain/env.$pid.zst: EV
$pid exec $P/rec_fork fork  [chain/out.zst: EV
  $child (ppid $pid) $P/rec_fork fork  [chain/rec_fork.$child.zst: EV
EOF
sed -e 's/(ppid [0-9]*) \/bin/(ppid PPID) \/bin/' -e 's/: [0-9]* events, 1 threads, [0-9.]* ms, complete\]$/: EV/' \
	tree.txt >got.txt
cmp -s want.txt got.txt && ok "tree: the exec chain under pid $pid, the fork child under rec_fork" ||
	{ fail "tree: text differs"; diff want.txt got.txt; }

"$AT" tree --json chain >tree.json
expect_eq "tree --json: exit status" $? 0
for t in chain/*.zst; do echo "$t $("$AT" info --json "$t" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')"; done >events.txt
/usr/bin/python3 - tree.json "$pid" "$child" "$P" events.txt <<'EOF' && ok "tree --json: loads, pids, chain, child, events" || fail "tree --json"
import json, sys
t = json.load(open(sys.argv[1]))
pid, child, P = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
events = dict(l.split() for l in open(sys.argv[5]))
assert t["traces"] == 4 and t["processes"] == 2, t
(root,) = t["roots"]
assert root["pid"] == pid and not root["parent_recorded"], root
assert [i["trace"] for i in root["images"]] == ["chain/sh.%d.zst" % pid, "chain/env.%d.zst" % pid, "chain/out.zst"]
assert root["images"][2]["cmdline"] == P + "/rec_fork fork"
(c,) = root["children"]
assert c["forked_from_image"] == 2, c
p = c["process"]
assert p["pid"] == child and p["ppid"] == pid and p["parent_recorded"] and p["children"] == [], p
imgs = root["images"] + p["images"]
for i in imgs:
    assert i["status"] == "complete" and i["duration_ns"] > 0 and i["threads"] == 1, i
    assert str(i["events"]) == events[i["trace"]], (i, events)
EOF

# The same tree from a list of the traces, in another order, and as a manifest.
"$AT" tree chain/rec_fork.$child.zst chain/out.zst chain/env.$pid.zst chain/sh.$pid.zst >tree2.txt
cmp -s tree.txt tree2.txt && ok "tree: TRACE... gives the same tree" || { fail "tree TRACE..."; diff tree.txt tree2.txt; }
ls chain/*.zst | sort -r >manifest
"$AT" tree --manifest manifest >tree3.txt
cmp -s tree.txt tree3.txt && ok "tree: --manifest gives the same tree" || { fail "tree --manifest"; diff tree.txt tree3.txt; }

# A trace cut short (its footer lost) is shown as truncated, not an error.
mkdir cut && head -c $(($(stat -c %s chain/out.zst) - 20)) chain/out.zst >cut/out.zst
"$AT" tree cut >cut.txt 2>err.txt
expect_eq "truncated: exit status" $? 0
grep -q "^$pid (ppid [0-9]*) $P/rec_fork fork  \[cut/out.zst: [0-9]* events, .*, truncated\]$" cut.txt &&
	ok "truncated: shown so" || fail "truncated: $(cat cut.txt)"

# ---- 4. hostile input: escaped, named, never a crash --------------------------------------------
mkdir hostile
"$REC" -q -o hostile/h.zst sh -c 'exit 0' $'\e]0;pwned\a' $'two\nlines' $'\xff\xfe' $'\u202e' >/dev/null 2>&1
expect_eq "hostile: recorded" $? 0
"$AT" tree hostile >h.txt 2>err.txt
expect_eq "hostile cmdline: exit status" $? 0
expect_eq "hostile cmdline: one line" "$(wc -l <h.txt)" 1
LC_ALL=C grep -q $'[\x01-\x1f\x7f]' h.txt && fail "hostile cmdline: raw control bytes" || ok "hostile cmdline: no control bytes"
grep -qF '\x1b]0;pwned\x07 two\x0alines \xff\xfe \xe2\x80\xae' h.txt && ok "hostile cmdline: shown as \\xNN" ||
	fail "hostile cmdline: $(cat -v h.txt)"
"$AT" tree --json hostile | /usr/bin/python3 -c '
import json, sys
c = json.load(sys.stdin)["roots"][0]["images"][0]["cmdline"]
assert c == "sh -c exit 0 \x1b]0;pwned\x07 two\nlines \\xff\\xfe \u202e", repr(c)' &&
	ok "hostile cmdline: JSON gives the string back" || fail "hostile cmdline: JSON"
# A file that is no trace, with a hostile name, among the traces.
printf 'not a trace' >"hostile/"$'\e[31mred'".zst"
{ echo; echo "$W/hostile/h.zst"; echo "$W/hostile/h.zst"; printf '%s\n' $'/nonexistent/\e[2Jx.zst'; } >hm
"$AT" tree --manifest hm >h.txt 2>err.txt
expect_eq "hostile manifest: exit status 2" $? 2
expect_eq "hostile manifest: the readable trace once" "$(grep -c 'hostile/h.zst:' h.txt)" 1
grep -qF "alloctrace: hm:4: lists /nonexistent/\\x1b[2Jx.zst, which is not a readable trace" err.txt &&
	ok "hostile manifest: names the manifest line, escaped" || fail "hostile manifest: $(cat -v err.txt)"
"$AT" tree hostile >h.txt 2>err.txt
expect_eq "not a trace in DIR: exit status 2" $? 2
expect_eq "not a trace in DIR: the tree of the rest" "$(wc -l <h.txt)" 1
expect_eq "not a trace in DIR: one message naming it" "$(grep -c '^alloctrace: hostile/\\x1b\[31mred.zst: ' err.txt)" 1
LC_ALL=C grep -q $'\e' err.txt && fail "not a trace in DIR: raw ESC in the message" || ok "not a trace in DIR: escaped"
# Synthetic and imported traces (pid 0, ppid 0: no recorded process) make
# no cycle and no exec chain: each is a process of its own; an import
# without times has no duration (unknown, not 0).
mkdir gen && "$AT" gen -q --ops 1000 S1 -o gen/a.zst && "$AT" gen -q --ops 1000 S2 -o gen/b.zst
printf '1: malloc 0x10 8\n1: free 0x10\n' >mr.txt && "$AT" import -q --from memory_replay mr.txt -o gen/c.zst
"$AT" tree gen >g.txt 2>err.txt
expect_eq "pid 0 = ppid 0: exit status" $? 0
expect_eq "pid 0 = ppid 0: three processes of their own" "$(grep -c '^0 (ppid 0) ' g.txt)" 3
expect_eq "pid 0: no exec chain" "$(grep -c ' exec ' g.txt)" 0
expect_eq "untimed import: duration unknown" "$(grep -c 'gen/c.zst: 2 events, 1 threads, duration unknown' g.txt)" 1
rc=$("$AT" tree empty-no-such >/dev/null 2>err.txt; echo $?)
expect_eq "tree of a missing path: exit" "$rc" 2
rc=$("$AT" tree >/dev/null 2>&1; echo $?)
expect_eq "tree without DIR: usage error" "$rc" 1
finish
