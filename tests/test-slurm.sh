#!/bin/sh
# `memsim sweep --slurm` against a real Slurm (docs/cluster.md): a private single-node cluster
# on localhost from Debian's packages (slurm-wlm, munge), its munged, slurmctld and slurmd
# started by hand with a slurm.conf in a temporary directory (SLURM_CONF), all stopped by pid
# at the end, whatever failed. Checks: a 4-task sweep's merged rows equal a local sweep's (timing
# fields aside), its shards going as two arrays under the cluster's MaxArraySize=3 (indices 0 to
# 2; sbatch refuses --array=0-3 there); a task cancelled with scancel mid-run and the command rerun end with the same
# rows as a local sweep (none lost, none twice); --status reports the states.
#
# test-slurm.sh MEMSIM   (TAP on stdout; skipped, saying why, where the daemons are not
# installed, when not root, and in the sanitized build)
memsim=$1
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
finish() { echo "1..$n"; exit $failed; }

[ "${MEMSIM_SANITIZED:-0}" = 1 ] && skip_all "sanitized build: the main build runs the cluster"
[ "$(id -u)" = 0 ] || skip_all "not root: this private cluster runs its daemons and jobs as root"
PATH=$PATH:/usr/sbin:/sbin
for tool in munged slurmctld slurmd sbatch squeue scancel sinfo; do
	command -v "$tool" >/dev/null 2>&1 ||
		skip_all "$tool not found (apt-get install slurm-wlm munge; setup.sh test does)"
done
# munged wants every directory above its socket searchable by all: not the suite's private
# TMPDIR (mode 0700), so /tmp.
tmp=$(mktemp -d /tmp/memsim-slurm-XXXXXX) || exit 1
chmod 0755 "$tmp"
pids=""
# Every daemon goes by its pid, and the temporary directory with them, however the test ends.
cleanup() {
	if [ -n "$pids" ]; then
		ids=$(squeue -h -o %A 2>/dev/null)
		[ -n "$ids" ] && scancel $ids 2>/dev/null
		for pid in $pids; do kill "$pid" 2>/dev/null; done
		for pid in $pids; do wait "$pid" 2>/dev/null; done
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
t0=$(date +%s)

# A free TCP port from $1 up (none listening on it, v4 or v6).
free_port() {
	p=$1
	while grep -qi ":$(printf '%04X' "$p") " /proc/net/tcp /proc/net/tcp6 2>/dev/null; do
		p=$((p + 1))
	done
	echo "$p"
}

dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 2>/dev/null
chmod 0400 "$tmp/munge.key"
munged -F --socket="$tmp/munge.sock" --key-file="$tmp/munge.key" --pid-file="$tmp/munged.pid" \
	--log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" >"$tmp/munged.out" 2>&1 &
pids="$!"
base=$((20000 + $$ % 20000))
ctld_port=$(free_port "$base")
d_port=$(free_port $((ctld_port + 1)))
cpus=$(nproc)
mem=$(awk '/^MemTotal:/ { m = int($2 / 1024) - 512; print (m > 1024 ? m : 1024) }' /proc/meminfo)
mkdir -p "$tmp/state" "$tmp/spool"
cat >"$tmp/slurm.conf" <<EOF
ClusterName=memsimtest
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SchedulerParameters=sched_interval=1
MaxArraySize=3
NodeName=localhost CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$tmp/slurm.conf"
i=0
while [ ! -S "$tmp/munge.sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
if [ ! -S "$tmp/munge.sock" ]; then
	not_ok "munged starts" "$(tail -n 3 "$tmp/munged.out" | tr '\n' ' ')"
	finish
fi
slurmctld -D -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
pids="$pids $!"
slurmd -D -f "$SLURM_CONF" >"$tmp/slurmd.out" 2>&1 &
pids="$pids $!"
until [ "$(sinfo -h -n localhost -o %T 2>/dev/null)" = idle ]; do
	if [ $(($(date +%s) - t0)) -gt 30 ]; then
		not_ok "the cluster starts (munged, slurmctld, slurmd; sinfo shows localhost idle)" \
			"sinfo: $(sinfo -h -o '%T %E' 2>&1)" \
			"munged: $(tail -3 "$tmp/munged.out" | tr '\n' ' ')" \
			"slurmctld: $(tail -n 5 "$tmp/slurmctld.log" "$tmp/slurmctld.out" 2>&1 | tr '\n' ' ')" \
			"slurmd: $(tail -n 5 "$tmp/slurmd.log" "$tmp/slurmd.out" 2>&1 | tr '\n' ' ')"
		finish
	fi
	sleep 0.5
done
ok "the cluster starts in $(($(date +%s) - t0)) s: $(sinfo -h -o '%P %a %D %T %N')"

# Waits (at most $2 s) until job $1 is neither pending nor running; its last state.
wait_job() {
	i=0
	while squeue -h -j "$1" -t PD,R,CF,CG -o %i 2>/dev/null | grep -q . && [ $i -lt $(($2 * 4)) ]; do
		sleep 0.25
		i=$((i + 1))
	done
	squeue -h -j "$1" -t all -o %T 2>/dev/null | sort -u | tr '\n' ' '
}
# A sweep's rows without what differs between two runs (time, memory), sorted.
rows() { sed -E 's/"(traced_seconds|peak_rss_bytes)":[^,}]*,?//g' "$1/results.json" | sort; }
# The job ids the submission printed: "submitted array job ID: ..." and "submitted merge job ID".
job_of() { sed -n "s/^submitted $1 job \([0-9]*\).*/\1/p" "$2"; }

plan="--kernel naive,flash2 --N 64,128,256 --d 16 --cache lab --cache i5-8250u"
"$memsim" sweep --out "$tmp/local" $plan --jobs 2 2>"$tmp/local.err" ||
	not_ok "local sweep" "$(cat "$tmp/local.err")"
if "$memsim" sweep --out "$tmp/four" $plan --slurm 4 >"$tmp/four.out" 2>"$tmp/four.err"; then
	array=$(job_of array "$tmp/four.out" | tr '\n' ' ') merge=$(job_of merge "$tmp/four.out")
	ok "sweep --slurm 4 submits array jobs ${array}and merge job $merge"
	sed 's/^/# /' "$tmp/four.err" "$tmp/four.out"
	if [ "$(job_of array "$tmp/four.out" | wc -l)" = 2 ] &&
		grep -q "(--array=0, shard = task + 3, of 4 shards)" "$tmp/four.out" &&
		grep -q "passes this cluster's MaxArraySize 3 tasks an array" "$tmp/four.err"; then
		ok "past MaxArraySize=3 (scontrol show config): shards 0-2 in one array, shard 3 in another"
	else
		not_ok "past MaxArraySize=3: two arrays" "$(cat "$tmp/four.err" "$tmp/four.out")"
	fi
	state=$(wait_job "$merge" 120)
	if [ "$state" = "COMPLETED " ] && rows "$tmp/local" >"$tmp/a" && rows "$tmp/four" >"$tmp/b" &&
		[ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b"; then
		ok "the merged rows of 4 tasks equal a local sweep's, row for row ($(wc -l <"$tmp/a") rows)"
	else
		not_ok "the merged rows of 4 tasks equal a local sweep's" "merge job: $state" \
			"$(cat "$tmp/four/slurm/"*.out 2>&1 | tail -n 5 | tr '\n' ' ')" \
			"$(diff "$tmp/a" "$tmp/b" 2>&1 | head -c 600)"
	fi
	"$memsim" sweep --status "$tmp/four" >"$tmp/status" 2>&1
	if [ "$(grep -c ' COMPLETED$' "$tmp/status")" = 5 ] && grep -q '^merge  *merged ' "$tmp/status"; then
		ok "--status: 4 tasks and the merge COMPLETED, merged"
	else
		not_ok "--status: 4 tasks and the merge COMPLETED" "$(tr '\n' '|' <"$tmp/status")"
	fi
	sed 's/^/# /' "$tmp/status"
	"$memsim" sweep --out "$tmp/four" $plan --slurm 4 >"$tmp/again" 2>&1
	if grep -q "complete and merged" "$tmp/again"; then
		ok "the same command again: $(cat "$tmp/again")"
	else
		not_ok "the same command again says all is done" "$(cat "$tmp/again")"
	fi
else
	not_ok "sweep --slurm 4" "$(cat "$tmp/four.err")"
fi

# Shard 1 of 2 runs N=512, 2048 and 6144 (about 3 s): cancelled once it has rows.
slow="--kernel naive --N 256,512,1024,2048,4096,6144 --d 16"
"$memsim" sweep --out "$tmp/slowlocal" $slow --jobs 2 2>"$tmp/slowlocal.err" ||
	not_ok "local sweep" "$(cat "$tmp/slowlocal.err")"
if "$memsim" sweep --out "$tmp/slow" $slow --slurm 2 >"$tmp/slow.out" 2>"$tmp/slow.err"; then
	array=$(job_of array "$tmp/slow.out") merge=$(job_of merge "$tmp/slow.out")
	i=0
	until [ "$(cat "$tmp/slow/shards/1/results.json" 2>/dev/null | wc -l)" -ge 2 ] ||
		[ $i -gt 240 ]; do
		sleep 0.25
		i=$((i + 1))
	done
	before=$(cat "$tmp/slow/shards/1/results.json" 2>/dev/null | wc -l)
	scancel "${array}_1"
	wait_job "${array}_1" 30 >/dev/null
	wait_job "${array}_0" 60 >/dev/null
	"$memsim" sweep --status "$tmp/slow" >"$tmp/status" 2>&1
	if grep -q "^1 .* ${array}_1  *CANCELLED" "$tmp/status" &&
		grep -q "^0 .* ${array}_0  *COMPLETED" "$tmp/status"; then
		ok "--status after scancel of task 1 with $before of 3 rows: CANCELLED, task 0 COMPLETED"
	else
		not_ok "--status after scancel: task 1 CANCELLED" "$(tr '\n' '|' <"$tmp/status")"
	fi
	sed 's/^/# /' "$tmp/status"
	"$memsim" sweep --out "$tmp/slow" $slow --slurm 2 >"$tmp/slow2.out" 2>"$tmp/slow2.err"
	array2=$(job_of array "$tmp/slow2.out") merge2=$(job_of merge "$tmp/slow2.out")
	sed 's/^/# /' "$tmp/slow2.err" "$tmp/slow2.out"
	if grep -q "(--array=1, of 2 shards)" "$tmp/slow2.out" && [ -n "$merge2" ]; then
		ok "the command rerun submits shard 1 alone (array job $array2) and merge job $merge2"
	else
		not_ok "the command rerun submits shard 1 alone" "$(cat "$tmp/slow2.err" "$tmp/slow2.out")"
	fi
	state=$(wait_job "$merge2" 120)
	old=$(squeue -h -j "$merge" -t all -o %T 2>/dev/null)
	if [ "$state" = "COMPLETED " ] && rows "$tmp/slowlocal" >"$tmp/a" && rows "$tmp/slow" >"$tmp/b" &&
		[ "$(wc -l <"$tmp/a")" = 6 ] && cmp -s "$tmp/a" "$tmp/b"; then
		ok "after the rerun the merged rows equal a local sweep's: 6, none twice, none lost"
	else
		not_ok "after the rerun the merged rows equal a local sweep's" "merge: $state" \
			"$(diff "$tmp/a" "$tmp/b" 2>&1 | head -c 600)"
	fi
	if [ "$old" = CANCELLED ]; then
		ok "the first merge job, which could never run, was cancelled"
	else
		not_ok "the first merge job was cancelled" "its state: $old"
	fi
	"$memsim" sweep --status "$tmp/slow" >"$tmp/status" 2>&1
	if grep -q "^1 .*3/3 .* ${array2}_1  *COMPLETED" "$tmp/status"; then
		ok "--status after the rerun: shard 1 3/3 COMPLETED in array job $array2"
	else
		not_ok "--status after the rerun" "$(tr '\n' '|' <"$tmp/status")"
	fi
	sed 's/^/# /' "$tmp/status"
else
	not_ok "sweep --slurm 2" "$(cat "$tmp/slow.err")"
fi
echo "# the whole test: $(($(date +%s) - t0)) s"
finish
