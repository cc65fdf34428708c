#!/bin/sh
# bench/bench-replay (the Python package's C benchmark): a FILE written by hand, replayed one
# access at a time and through memsim_access_batch, gives the same report and the hand count;
# a missing, truncated or bad FILE and a bad spec or usage give one line on stderr, exit 1/2.
#
# test-bench-replay.sh BENCH_REPLAY   (TAP on stdout)
bench=$1
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP python3 not found"; exit 0; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

# write FILE N ADDRS SIZES WRITES: the format numpy's tofile gives (native byte order); N may
# differ from the arrays' length, for the truncated cases.
write() {
	python3 - "$@" <<'END'
import struct, sys
path, n = sys.argv[1], int(sys.argv[2])
a, s, w = ([int(x, 0) for x in arg.split(",") if x] for arg in sys.argv[3:6])
with open(path, "wb") as f:
    f.write(struct.pack("=Q", n) + struct.pack("=%dQ" % len(a), *a) +
            struct.pack("=%dI" % len(s), *s) + struct.pack("=%dB" % len(w), *w))
END
}

# The hand count: loads of 8, 8 and 100 bytes (the last over three lines), stores of 4 and 2
# bytes (a write flag of 5 is a store too). With no cache, DRAM moves each access's bytes.
write "$tmp/t.bin" 5 0x1000,0x1008,0x1040,0x103c,0x2000 8,8,4,100,2 0,0,1,0,5
for spec in none L1=256B:2:64 'L1=128B:2:64,L2=1K:4:64'; do
	"$bench" "$tmp/t.bin" "$spec" >"$tmp/one" 2>"$tmp/err"; rc1=$?
	"$bench" "$tmp/t.bin" "$spec" --batch >"$tmp/batch" 2>>"$tmp/err"; rc2=$?
	if [ $rc1 = 0 ] && [ $rc2 = 0 ] && python3 - "$tmp/one" "$tmp/batch" "$spec" >"$tmp/cmp" 2>&1 <<'END'
import json, sys
one, batch = (open(p).read() for p in sys.argv[1:3])
if one.count("\n") != 1 or batch.count("\n") != 1:
    sys.exit("not one line")
one, batch = json.loads(one), json.loads(batch)
if one["report"] != batch["report"]:
    sys.exit("reports differ")
for d in (one, batch):
    cpu, dram = d["report"]["cpu"], d["report"]["dram"]
    if d["accesses"] != 5 or not d["seconds"] >= 0 or "rate" not in d:
        sys.exit("accesses %s" % d["accesses"])
    if (cpu["loads"], cpu["loads_bytes"], cpu["stores"], cpu["stores_bytes"]) != (3, 116, 2, 6):
        sys.exit("cpu %s" % cpu)
    if sys.argv[3] == "none" and (dram["read_bytes"], dram["write_bytes"]) != (116, 6):
        sys.exit("dram %s" % dram)
END
	then
		ok "$spec: one by one and --batch give the same report, the hand count"
	else
		not_ok "$spec: same report, hand count" "rc $rc1 $rc2" "$(cat "$tmp/err" "$tmp/cmp" | head -5)"
	fi
done

# no accesses at all
write "$tmp/empty.bin" 0 "" "" ""
if "$bench" "$tmp/empty.bin" none --batch >"$tmp/out" 2>"$tmp/err" && grep -q '"accesses": 0,' "$tmp/out"; then
	ok "an empty FILE: 0 accesses"
else
	not_ok "an empty FILE" "$(cat "$tmp/err" "$tmp/out" | head -3)"
fi

# expect RC WHAT ARGS...: exit RC, one line on stderr naming the problem, nothing on stdout.
expect() {
	want=$1 what=$2
	shift 2
	"$bench" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
	if [ $rc = "$want" ] && [ "$(wc -l <"$tmp/err")" = 1 ] && [ ! -s "$tmp/out" ] &&
		grep -q "$what" "$tmp/err"; then
		ok "exit $want: $(cat "$tmp/err")"
	else
		not_ok "$* exits $want with '$what'" "rc $rc" "$(cat "$tmp/err" | head -3)"
	fi
}
write "$tmp/short.bin" 5 0x1000,0x1008 8,8 0,0
write "$tmp/long.bin" 1 0x1000,0x1008 8,8 0,0
printf 'abc' >"$tmp/tiny.bin"
write "$tmp/zero.bin" 2 0x1000,0x1008 8,0 0,0
write "$tmp/wrap.bin" 1 0xfffffffffffffffc 8 0
expect 1 "cannot open" "$tmp/missing.bin" none
expect 1 "truncated: 34 bytes, too few for 5 accesses" "$tmp/short.bin" none
expect 1 "34 bytes, where 1 accesses take 21" "$tmp/long.bin" none --batch
expect 1 "no access count" "$tmp/tiny.bin" none
expect 1 "access 1: 0 bytes" "$tmp/zero.bin" none --batch
expect 1 "access 0: 8 bytes at 0xfffffffffffffffc" "$tmp/wrap.bin" none
expect 2 "bogus" "$tmp/t.bin" bogus
expect 2 "usage" "$tmp/t.bin"
expect 2 "only be --batch" "$tmp/t.bin" none --fast
echo "1..$n"
exit $failed
