# bench/fidelity/programs.sh — the real programs of make bench-fidelity, sourced
# by bench/fidelity/run.sh, bench/rec/sizes.sh (make bench-rec-size) and
# bench/alloc/real.sh (make bench-alloc-real), so all run exactly the same
# commands on the same inputs. The caller sets HERE (this directory), IN (a
# directory for the inputs) and PY (the Python to run: /usr/bin/python3,
# never a pyenv shim).

# The sizes: FIDELITY_* from the environment, else about a second of CPU
# per run here.
SQLITE_ROWS=${FIDELITY_SQLITE_ROWS:-150000}
PY_N=${FIDELITY_PY_N:-100000}
PYMT_N=${FIDELITY_PYMT_N:-200000}
PERL_N=${FIDELITY_PERL_N:-300000}
GCC_FUNCS=${FIDELITY_GCC_FUNCS:-60}
REDIS_REQ=${FIDELITY_REDIS_REQ:-45000}
JQ_N=${FIDELITY_JQ_N:-200000}
PERLGROW_LINES=${FIDELITY_PERLGROW_LINES:-500000}
NODE_N=${FIDELITY_NODE_N:-3000000}

# round_order R NAME...: the NAMEs in round R's order, a permutation drawn
# from R (the same R, the same order), so that across rounds no allocator
# always runs first, nor always right after the same other one: whatever a
# round's order does to a run (docs/FIDELITY.md, "the order of a round":
# seen once, not explained) a fixed order would pair with one allocator for
# good.
round_order() {
	local r=$1
	shift
	printf '%s\n' "$@" | awk -v seed="$r" 'BEGIN { srand(seed + 1) } { k[NR] = rand(); v[NR] = $0 }
		END { for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (k[j] < k[i]) {
			t = k[i]; k[i] = k[j]; k[j] = t; t = v[i]; v[i] = v[j]; v[j] = t }
		for (i = 1; i <= NR; i++) printf "%s%s", v[i], i < NR ? " " : "\n" }'
}

# make_inputs: sqlite.sh's script and gen_c.py's C file, in $IN.
make_inputs() {
	sh "$HERE/sqlite.sh" "$SQLITE_ROWS" >"$IN/sqlite.sql" && $PY "$HERE/gen_c.py" "$GCC_FUNCS" >"$IN/gen.c"
}

# prog_P PREFIX...: run program P behind PREFIX (a timer and env, or allocrec),
# its output on stdout.
prog_sqlite() { "$@" sqlite3 :memory: <"$IN/sqlite.sql"; }
prog_python() { "$@" $PY "$HERE/py_single.py" "$PY_N"; }
prog_python-mt() { "$@" $PY "$HERE/py_threads.py" "$PYMT_N"; }
prog_perl() { "$@" perl "$HERE/perl_churn.pl" "$PERL_N"; }
prog_gcc() { "$@" gcc -O2 -c "$IN/gen.c" -o "$IN/gen.o" && sha256sum <"$IN/gen.o"; }
# clang++ runs its compiler and assembler in one process (clang -### says
# "(in-process)"): one trace, and the whole of LLVM's operator new.
prog_clang() { "$@" clang++ -O2 -c "$HERE/stl_unit.cpp" -o "$IN/stl_unit.o" && sha256sum <"$IN/stl_unit.o"; }
# jq and perl-grow read a data file of gen_inputs.py's, written at their
# first run (outside PREFIX, so never timed) and kept in $IN: only the
# programs asked for pay for their inputs.
# input KIND N: the path of gen_inputs.py's KIND N, written if missing.
input() {
	local f=$IN/$1-$2
	if [ ! -s "$f" ]; then
		$PY "$HERE/gen_inputs.py" "$1" "$2" >"$f.tmp" && mv "$f.tmp" "$f" || return 1
	fi
	echo "$f"
}
# jq: a JSON document of JQ_N records parsed whole, filtered and mapped
# (every value a malloc'ed jv; 4.8 M calls, one thread).
prog_jq() {
	local f
	f=$(input json "$JQ_N") || return 1
	"$@" jq -c '[.[] | select(.v > 0.5) | .tags] | length' "$f"
}
# perl-grow: many long-lived strings growing by appends among live
# neighbours (perl_grow.pl; 2.3 M calls, a tenth of them reallocs).
prog_perl-grow() {
	local f
	f=$(input text "$PERLGROW_LINES") || return 1
	"$@" perl "$HERE/perl_grow.pl" "$f"
}
# node: a JavaScript engine whose objects live in its own heap; malloc sees
# the engine's own allocations, from the main thread and V8's helper
# threads (1.1 M calls on 6 threads).
prog_node() { "$@" node "$HERE/node_churn.js" "$NODE_N"; }
# prog_cc1 PREFIX...: the compiler proper of prog_gcc alone (the command gcc
# -### gives), writing its assembly to $IN/gen.s: for recorders that do not
# follow the driver's children.
prog_cc1() {
	local cmd
	cmd=$(gcc -### -O2 -c "$IN/gen.c" -o "$IN/gen.o" 2>&1 | grep -m1 '/cc1 ') || return 1
	eval "set -- \"\$@\" $(echo "$cmd" | sed 's| -o [^ ]*| -o "$IN/gen.s"|')"
	"$@"
}

free_port() {
	$PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }

# redis_up PREFIX...: start redis-server behind PREFIX on a free port, wait
# until it answers; sets RPID (the pid PREFIX runs as) and RPORT. Returns 1,
# saying why on stderr, when it does not answer within 10 s.
redis_up() {
	local w # its callers' w is theirs
	RPORT=$(free_port)
	"$@" redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no --dir "$IN" --logfile "$IN/redis.log" >/dev/null &
	RPID=$!
	for ((w = 0; w < 200; w++)); do
		[ "$(redis-cli -p "$RPORT" ping 2>/dev/null)" = PONG ] && return 0
		kill -0 $RPID 2>/dev/null || break
		sleep 0.05
	done
	kill $RPID 2>/dev/null
	wait $RPID 2>/dev/null
	echo "redis-server did not answer on port $RPORT: $(tail -1 "$IN/redis.log")" >&2
	return 1
}
redis_down() {
	redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1
	wait $RPID || { echo "redis-server exited with status $? at shutdown" >&2; return 1; }
}

