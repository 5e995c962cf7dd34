#!/usr/bin/env bash
# Results databases from other teams are untrusted input (issue 17): hostile
# databases written here with Python's sqlite3 module — a trigger in the first
# or a later input of `allocreport merge`, a view replacing allocator_comparison
# or run_summary, runs with reordered columns, a column of another type, a
# column, index or virtual table of their own, someone else's database — must
# be refused by allocreport merge, allocreplay --db and allocreport, naming
# the file and the object, with nothing written (also a foreign key, key,
# collation, generated column or STRICT-ness not allocrr's, and a sweep of
# every table and view tampered with); a table of their own (notes)
# is accepted and never copied; an older schema version still opens and
# migrates; and results/sql/merge.sql names every column of every table of the
# current schema, so merging copies every column by name.
. "$(dirname "$0")/report_lib.inc"
PY=/usr/bin/python3
"$AR" "$SAMPLE" -a glibc,pool --repeat 2 --db good.db >/dev/null 2>&1 || fail "replay good.db"
"$AR" "$SAMPLE" -a glibc --repeat 1 --db other.db >/dev/null 2>&1 || fail "replay other.db"
q other.db "UPDATE runs SET host = 'other-host'"
runs_good=$(q good.db 'SELECT count(*) FROM runs'); runs_other=$(q other.db 'SELECT count(*) FROM runs')

# hostile SRC DST SQL...: DST is a copy of SRC changed by the SQL.
hostile() {
	cp "$1" "$2" && $PY - "$2" "$3" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
con.executescript(sys.argv[2])
con.commit()
PY
}
# refused WHAT EXPECTED-TEXT CMD...: CMD exits 2 and says EXPECTED-TEXT.
refused() {
	local what=$1 text=$2; shift 2
	"$@" >out.txt 2>err.txt
	local rc=$?
	expect_eq "$what: exit" "$rc" 2
	grep -qF -- "$text" err.txt && ok "$what: says why" || fail "$what: message: $(cat err.txt out.txt)"
}
dbsum() { q "$1" "SELECT * FROM sqlite_master ORDER BY name; SELECT * FROM runs ORDER BY run_id;
	SELECT * FROM latency ORDER BY run_id, op; PRAGMA user_version" | md5sum; }

# ---- a trigger in the first input: it used to become part of OUT.db -------------------
hostile good.db evil.db "
CREATE TRIGGER boost AFTER INSERT ON runs BEGIN
  UPDATE runs SET ops_per_sec = 1e12 WHERE allocator = 'pool';
  DELETE FROM latency WHERE run_id IN (SELECT run_id FROM runs WHERE allocator = 'glibc');
END;"
refused "merge: trigger in the first input" \
	"evil.db: trigger 'boost' on table runs is not part of allocrr's schema: refusing to merge it" \
	"$AREP" merge new.db evil.db other.db
[ -e new.db ] && fail "refused merge left new.db behind" || ok "refused merge: no OUT.db"
# The same merge with the trigger's database later: nothing merged either.
refused "merge: trigger in a later input" "evil.db: trigger 'boost'" "$AREP" merge new.db other.db evil.db
[ -e new.db ] && fail "refused merge left new.db behind" || ok "refused merge (later input): no OUT.db"
cp good.db out.db; before=$(dbsum out.db)
refused "merge into an existing OUT: trigger" "evil.db: trigger 'boost'" "$AREP" merge out.db other.db evil.db
expect_eq "existing OUT unchanged (every input checked before any is merged)" "$(dbsum out.db)" "$before"
# A clean merge creates OUT.db from allocrr's schema, not from the first input.
"$AREP" merge new.db good.db other.db >out.txt 2>err.txt || fail "clean merge: exit $? $(cat err.txt)"
expect_eq "clean merge: runs" "$(q new.db 'SELECT count(*) FROM runs')" $((runs_good + runs_other))
expect_eq "clean merge: no triggers" "$(q new.db "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'")" 0
expect_eq "clean merge: integrity" "$(db_integrity new.db)" ok

# ---- allocreplay --db and allocreport on a database carrying a trigger ------------------
hostile good.db wipe.db "
CREATE TRIGGER wipe AFTER INSERT ON runs BEGIN DELETE FROM runs WHERE run_id < NEW.run_id; END;"
before=$(dbsum wipe.db)
refused "allocreplay --db: trigger" "wipe.db: trigger 'wipe' on table runs is not part of allocrr's schema" \
	"$AR" "$SAMPLE" -a glibc --repeat 1 --db wipe.db
expect_eq "allocreplay --db: database untouched" "$(dbsum wipe.db)" "$before"
expect_eq "allocreplay --db: earlier runs kept" "$(q wipe.db 'SELECT count(*) FROM runs')" "$runs_good"
refused "allocreport: trigger" "wipe.db: trigger 'wipe'" "$AREP" --db wipe.db

# ---- views: allocator_comparison or run_summary replaced --------------------------------
hostile good.db view.db "
DROP VIEW allocator_comparison;
CREATE VIEW allocator_comparison AS SELECT trace_sha256, trace_name, host, allocator, count(*) AS runs,
  1e12 AS ops_per_sec FROM run_summary GROUP BY 1, 2, 3, 4;"
refused "allocreport: allocator_comparison replaced" \
	"view.db: view 'allocator_comparison' is not allocrr's: its SQL differs from schema version" \
	"$AREP" --db view.db
refused "merge: allocator_comparison replaced" "view.db: view 'allocator_comparison'" "$AREP" merge new2.db view.db
refused "allocreplay --db: allocator_comparison replaced" "view.db: view 'allocator_comparison'" \
	"$AR" "$SAMPLE" -a glibc --repeat 1 --db view.db
hostile good.db summary.db "
DROP VIEW allocator_comparison; DROP VIEW run_summary;
CREATE VIEW run_summary AS SELECT r.run_id, r.trace_sha256, t.name AS trace_name, r.allocator, r.repetition,
  r.status, r.threads, r.ops, r.wall_ns, r.ops_per_sec * 1000 AS ops_per_sec FROM runs r JOIN traces t ON t.sha256 = r.trace_sha256;"
refused "allocreport: run_summary replaced" "summary.db: view 'run_summary' is not allocrr's" "$AREP" --db summary.db
hostile good.db myview.db "CREATE VIEW fast AS SELECT * FROM runs WHERE ops_per_sec > 1;"
refused "allocreport: a view of their own" "myview.db: view 'fast' is not part of allocrr's schema" "$AREP" --db myview.db

# ---- columns -----------------------------------------------------------------------------
# runs rebuilt with ops_per_sec and peak_heap_rss_bytes (name and type) swapped in
# place: the same columns in another order, never written by allocreplay.
$PY - good.db reorder.db <<'PY' || fail "building reorder.db"
import sqlite3, sys
src, dst = sys.argv[1], sys.argv[2]
s = sqlite3.connect(src)
objs = s.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid").fetchall()
ver = s.execute("PRAGMA user_version").fetchone()[0]
s.close()
d = sqlite3.connect(dst)
for typ, name, sql in objs:
    if name == "runs":
        a, b = "ops_per_sec REAL", "peak_heap_rss_bytes INTEGER"
        assert a in sql and b in sql
        sql = sql.replace(a, "\0").replace(b, a).replace("\0", b)
    d.execute(sql)
d.execute("ATTACH ? AS src", (src,))
for (t,) in d.execute("SELECT name FROM main.sqlite_master WHERE type = 'table'").fetchall():
    cols = ", ".join('"%s"' % c[1] for c in d.execute("PRAGMA main.table_info(%s)" % t))
    d.execute("INSERT INTO main.%s (%s) SELECT %s FROM src.%s" % (t, cols, cols, t))
d.execute("PRAGMA user_version = %d" % ver)
d.commit()
PY
# allocrr's tools refuse it (a positional reader such as `SELECT *` would swap
# them); results/sql/merge.sql run by hand, which checks nothing, copies by name.
refused "merge: columns in another order" \
	"reorder.db: table runs: column 27 is peak_heap_rss_bytes where allocrr's schema version" \
	"$AREP" merge swapped.db other.db reorder.db
refused "allocreplay --db: columns in another order" "reorder.db: table runs: column 27" \
	"$AR" "$SAMPLE" -a glibc --repeat 1 --db reorder.db
cp other.db swapped.db
q swapped.db "ATTACH 'reorder.db' AS src" ".read $ROOT/results/sql/merge.sql" || fail "merge.sql on reordered columns"
expect_eq "merge.sql on reordered columns: ops/s and heap copied by name" \
	"$(q swapped.db "ATTACH 'good.db' AS g" "SELECT count(*) FROM runs r JOIN g.runs x USING (run_uuid)
	   WHERE r.ops_per_sec IS x.ops_per_sec AND r.peak_heap_rss_bytes IS x.peak_heap_rss_bytes")" "$runs_good"

$PY - good.db retyped.db <<'PY' || fail "building retyped.db"
import sqlite3, sys
s = sqlite3.connect(sys.argv[1])
objs = s.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid").fetchall()
ver = s.execute("PRAGMA user_version").fetchone()[0]
d = sqlite3.connect(sys.argv[2])
for name, sql in objs:
    d.execute(sql.replace("ops_per_sec REAL", "ops_per_sec TEXT") if name == "runs" else sql)
d.execute("PRAGMA user_version = %d" % ver)
d.commit()
PY
refused "merge: a column of another type" "retyped.db: column runs.ops_per_sec is TEXT, allocrr's schema version" \
	"$AREP" merge new3.db retyped.db
refused "allocreplay --db: a column of another type" "retyped.db: column runs.ops_per_sec is TEXT" \
	"$AR" "$SAMPLE" -a glibc --repeat 1 --db retyped.db
# Declarations a positional or name-based reader would not notice: a foreign key
# without its cascade, run_uuid no longer unique, a collation, a generated
# ops_per_sec, a STRICT table. Each rebuilt from good.db's schema, edited.
$PY - good.db <<'PY' || fail "building the redeclared databases"
import sqlite3, sys
edits = {"fk": ("latency", "REFERENCES runs(run_id) ON DELETE CASCADE", "REFERENCES runs(run_id)"),
         "uniq": ("runs", "run_uuid TEXT NOT NULL UNIQUE", "run_uuid TEXT NOT NULL"),
         "coll": ("runs", "allocator TEXT NOT NULL,", "allocator TEXT NOT NULL COLLATE NOCASE,"),
         "gen": ("runs", "ops_per_sec REAL,", "ops_per_sec REAL GENERATED ALWAYS AS (ops * 1000.0),"),
         "strict": ("allocators", ")", ") STRICT")}
s = sqlite3.connect(sys.argv[1])
objs = s.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid").fetchall()
ver = s.execute("PRAGMA user_version").fetchone()[0]
for name, (table, a, b) in edits.items():
    d = sqlite3.connect("redecl-%s.db" % name)
    for n, sql in objs:
        if n == table:
            assert a in sql, (name, a)
            sql = sql[::-1].replace(a[::-1], b[::-1], 1)[::-1] if name == "strict" else sql.replace(a, b, 1)
        d.execute(sql)
    d.execute("PRAGMA user_version = %d" % ver)
    d.commit()
PY
refused "redeclared: foreign key" "redecl-fk.db: table latency differs from allocrr's schema version" \
	"$AREP" merge new6.db redecl-fk.db
refused "redeclared: unique" "redecl-uniq.db: table runs differs from allocrr's schema version" \
	"$AREP" --db redecl-uniq.db
refused "redeclared: collation" "redecl-coll.db: column runs.allocator differs from allocrr's schema version" \
	"$AR" "$SAMPLE" -a glibc --repeat 1 --db redecl-coll.db
refused "redeclared: generated column" "redecl-gen.db: column runs.ops_per_sec differs" "$AREP" --db redecl-gen.db
refused "redeclared: STRICT" "redecl-strict.db: table allocators differs" "$AREP" merge new6.db redecl-strict.db
hostile good.db extracol.db "ALTER TABLE runs ADD COLUMN bonus REAL DEFAULT 1e12;"
refused "merge: a column of their own" "extracol.db: column runs.bonus is not part of allocrr's schema version" \
	"$AREP" merge new4.db extracol.db
refused "allocreport: a column of their own" "extracol.db: column runs.bonus" "$AREP" --db extracol.db
hostile good.db index.db "CREATE INDEX mine ON runs(ops_per_sec);"
refused "merge: an index of their own" "index.db: index 'mine' on table runs is not part of allocrr's schema" \
	"$AREP" merge new5.db index.db
hostile good.db vtab.db "CREATE VIRTUAL TABLE notes USING fts5(body);"
refused "allocreport: a virtual table" "vtab.db: virtual table 'notes'" "$AREP" --db vtab.db

# ---- a table of their own: harmless, read past, never copied -----------------------------
hostile good.db notes.db "CREATE TABLE notes (run_id INTEGER REFERENCES runs(run_id), text TEXT);
INSERT INTO notes SELECT run_id, 'looks fine' FROM runs;"
"$AREP" --db notes.db >/dev/null 2>err.txt && ok "allocreport: a table of their own is read past" || fail "allocreport notes.db: $(cat err.txt)"
"$AREP" merge notes_out.db notes.db other.db >/dev/null 2>err.txt || fail "merge notes.db: $(cat err.txt)"
expect_eq "merge: their table not copied" "$(q notes_out.db "SELECT count(*) FROM sqlite_master WHERE name = 'notes'")" 0
"$AR" "$SAMPLE" -a glibc --repeat 1 --db notes.db >/dev/null 2>err.txt || fail "allocreplay --db notes.db: $(cat err.txt)"
expect_eq "allocreplay --db with their table: run added" "$(q notes.db 'SELECT count(*) FROM runs')" $((runs_good + 1))

# ---- someone else's database; an older schema -------------------------------------------
$PY -c "import sqlite3; c = sqlite3.connect('app.db'); c.execute('CREATE TABLE customers (id INTEGER, name TEXT)'); c.commit()"
before=$(q app.db "SELECT * FROM sqlite_master" | md5sum)
refused "allocreplay --db: someone else's database" "app.db: not a results database" \
	"$AR" "$SAMPLE" -a glibc --repeat 1 --db app.db
expect_eq "someone else's database untouched" "$(q app.db "SELECT * FROM sqlite_master" | md5sum)" "$before"
for f in "$ROOT"/results/sql/000[123]-*.sql; do q v3.db ".read $f" || fail "building v3.db"; done
q v3.db "PRAGMA user_version = 3"
"$AR" "$SAMPLE" -a glibc --repeat 1 --db v3.db >/dev/null 2>err.txt || fail "allocreplay on schema 3: $(cat err.txt)"
expect_eq "schema 3 migrated" "$(q v3.db 'PRAGMA user_version')" "$(q good.db 'PRAGMA user_version')"
for f in "$ROOT"/results/sql/000[123]-*.sql; do q v3evil.db ".read $f"; done
q v3evil.db "PRAGMA user_version = 3; CREATE TRIGGER t3 AFTER INSERT ON traces BEGIN DELETE FROM runs; END;"
refused "allocreplay --db: schema 3 with a trigger" "v3evil.db: trigger 't3' on table traces" \
	"$AR" "$SAMPLE" -a glibc --repeat 1 --db v3evil.db
expect_eq "schema 3 with a trigger: not migrated" "$(q v3evil.db 'PRAGMA user_version')" 3

# ---- a sweep: every table and view of the schema, each kind of tampering ------------------
# For each table of allocrr's: a trigger on it, a column added, its last
# column dropped (where no view needs it), an index of its own, the table
# replaced by a view; each view replaced; our index redefined. Every one is
# refused by all three tools, with the file unchanged.
mkdir sweep
$PY - good.db sweep <<'PY' || fail "building the sweep databases"
import shutil, sqlite3, sys
src, out = sys.argv[1], sys.argv[2]
s = sqlite3.connect(src)
tables = [r[0] for r in s.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
views = s.execute("SELECT name, sql FROM sqlite_master WHERE type = 'view'").fetchall()
cols = {t: [r[1] for r in s.execute("PRAGMA table_info(%s)" % t)] for t in tables}
s.close()
muts = []
for t in tables:
    c0 = cols[t][0]
    muts += [("trigger-" + t, "CREATE TRIGGER tamper AFTER INSERT ON %s BEGIN SELECT 1; END" % t),
             ("column-" + t, "ALTER TABLE %s ADD COLUMN tamper INTEGER" % t),
             ("dropcol-" + t, "ALTER TABLE %s DROP COLUMN %s" % (t, cols[t][-1])),
             ("index-" + t, "CREATE INDEX tamper ON %s(%s)" % (t, c0)),
             ("asview-" + t, "PRAGMA foreign_keys = OFF; DROP TABLE %s; CREATE VIEW %s AS SELECT 1 AS %s" % (t, t, c0))]
for v, sql in views:
    muts.append(("view-" + v, "DROP VIEW %s; %s LIMIT 1000000" % (v, sql)))
muts.append(("index-ours", "DROP INDEX runs_by_trace; CREATE INDEX runs_by_trace ON runs(allocator)"))
made = 0
for name, sql in muts:
    dst = "%s/%s.db" % (out, name)
    shutil.copy(src, dst)
    try:
        con = sqlite3.connect(dst, isolation_level=None)
        con.executescript(sql)
        con.close()
        made += 1
    except sqlite3.Error as e:  # e.g. a column a view needs cannot be dropped
        print("skip %s: %s" % (name, e))
        import os; os.remove(dst)
print("%d tampered databases" % made)
PY
nsweep=0; nrefused=0
for db in sweep/*.db; do
	before=$(dbsum "$db" 2>/dev/null)
	for tool in merge report replay; do
		case $tool in
		merge) "$AREP" merge sweep/out.db other.db "$db" >/dev/null 2>sweep.err ;;
		report) "$AREP" --db "$db" >/dev/null 2>sweep.err ;;
		replay) "$AR" "$SAMPLE" -a glibc --repeat 1 --db "$db" >/dev/null 2>sweep.err ;;
		esac
		rc=$?; nsweep=$((nsweep + 1))
		if [ $rc = 2 ] && grep -qF "$db: " sweep.err && [ ! -e sweep/out.db ]; then
			nrefused=$((nrefused + 1))
		else
			fail "sweep: $tool on $db: exit $rc: $(cat sweep.err)"; rm -f sweep/out.db*
		fi
	done
	[ "$(dbsum "$db" 2>/dev/null)" = "$before" ] || fail "sweep: $db changed"
done
expect_eq "sweep: tool runs refused (of $nsweep)" "$nrefused" "$nsweep"
[ "$nsweep" -ge 90 ] && ok "sweep: $nsweep tool runs" || fail "sweep: only $nsweep tool runs"

# ---- merge.sql copies every column of every table, by name --------------------------------
$PY - "$ROOT/results/sql/merge.sql" good.db <<'PY' || fail "merge.sql column lists (see above)"
import re, sqlite3, sys
sql = re.sub(r"--[^\n]*", "", open(sys.argv[1]).read())
con = sqlite3.connect(sys.argv[2])
tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
bad = 0
for t in tables:
    want = [r[1] for r in con.execute("PRAGMA table_info(%s)" % t)]
    m = re.search(r"INSERT\s+(?:OR\s+\w+\s+)?INTO\s+main\.%s\s*\(([^)]*)\)\s*SELECT\s+(.*?)\s+FROM" % t, sql, re.S | re.I)
    if not m:
        print("FAIL merge.sql has no INSERT INTO main.%s (columns) SELECT" % t); bad += 1; continue
    got = [c.strip() for c in m.group(1).split(",")]
    sel = [c.strip().split(".")[-1] for c in m.group(2).split(",")]
    if sorted(got) != sorted(want):
        print("FAIL main.%s: merge.sql lists %s, the schema has %s" % (t, sorted(set(got) ^ set(want)), len(want))); bad += 1
    elif len(sel) != len(got) or any(s != g and (g, s) != ("run_id", "new_id") for s, g in zip(sel, got)):
        print("FAIL main.%s: SELECT list does not follow the column list: %s" % (t, sel)); bad += 1
    else:
        print("ok   merge.sql copies all %d columns of %s by name" % (len(want), t))
sys.exit(1 if bad else 0)
PY
# Every value of every run and trace arrives: merged rows equal the input's, column by
# column (good.db first: a trace both inputs have keeps the first one's first_seen).
"$AREP" merge every.db good.db other.db >/dev/null 2>err.txt || fail "merge every.db: $(cat err.txt)"
expect_eq "merged runs equal the input's in every column" "$($PY - every.db good.db <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("ATTACH ? AS g", (sys.argv[2],))
cols = [r[1] for r in c.execute("PRAGMA g.table_info(runs)") if r[1] != "run_id"]
diff = c.execute("SELECT count(*) FROM (SELECT %s FROM g.runs EXCEPT SELECT %s FROM main.runs)" % (",".join(cols), ",".join(cols))).fetchone()[0]
cols = [r[1] for r in c.execute("PRAGMA g.table_info(traces)")]
diff += c.execute("SELECT count(*) FROM (SELECT %s FROM g.traces EXCEPT SELECT %s FROM main.traces)" % (",".join(cols), ",".join(cols))).fetchone()[0]
print(diff)
PY
)" 0
finish
