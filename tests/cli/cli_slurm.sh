#!/usr/bin/env bash
# cli_slurm: docs/mpi.md's Slurm scripts under a real Slurm (issue 48). Starts its own
# one-node cluster for localhost — munged, slurmctld and slurmd from a config written into a
# temporary folder (its own key, socket, state, spool, logs and pid files; free ports) — then
# `sbatch --wait`s the batch script of docs/mpi.md itself, extracted from the page and cut to
# one node with two ranks, and checks that its file equals the serial run's, as is that of
# `mpirun -n 2` inside an allocation (the page's alternative). Then: `srun`
# without PMIx (Debian's MpiDefault=none) is refused in one line naming the fix, and nothing
# is written; the job-array recipe (two tasks, one a bad recording) and its summary. The
# daemons are stopped by PID on exit, whatever happens.
# The substitutions (to_ci below), and nothing else, change the page's scripts: 2 nodes -> 1,
# 4 tasks a node -> 2, 16 CPUs a task -> 1, no GPU lines, --readers 14 -> 1, /lustre/... ->
# this test's folders; rtstap and rtstap-mpi are this build's (first on PATH).
# env: RTSTAP_BIN, RTSTAP_MPI_BIN, RTSTAP_TOOLS_DIR; RTSTAP_REQUIRE_SLURM=1: fail instead of
# skipping when a build that makes rtstap-mpi (RTSTAP_MPI_WANTED=1) cannot run Slurm here.
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
skip() {
    echo "cli_slurm: $1"
    [ "${RTSTAP_REQUIRE_SLURM:-0}" = 1 ] && [ "${RTSTAP_MPI_WANTED:-0}" = 1 ] && exit 1
    exit 77
}
[ -x "${RTSTAP_MPI_BIN:-}" ] || skip "rtstap-mpi was not built"
for c in munged mungekey slurmctld slurmd sbatch srun sinfo squeue scancel python3; do
    command -v "$c" >/dev/null || skip "$c is missing (Debian: slurm-wlm, munge)"
done
[ "$(id -u)" = 0 ] || skip "slurmd runs jobs only as root here (CI runs as root)"
same=$RTSTAP_TOOLS_DIR/h5same
page=$RTSTAP_SOURCE_DIR/docs/mpi.md
tmp=$(mktemp -d)
chmod 755 "$tmp" # munged: its socket's folder must be reachable by every user
pids=()
stop() {
    if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ]; then
        timeout 10 squeue -h -o %A 2>/dev/null | timeout 10 xargs -r scancel >/dev/null 2>&1
    fi
    local p i
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do
        for i in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$p" 2>/dev/null && { echo "cli_slurm: PID $p did not stop on SIGTERM"; kill -KILL "$p"; }
    done
    rm -rf "$tmp"
}
trap stop EXIT
trap 'exit 130' INT TERM
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
started=$(date +%s)

# --- the cluster: munged with its own key and socket
mkdir -m 755 "$tmp/munge" && mkdir "$tmp/state" "$tmp/spool" "$tmp/log"
mungekey -c -k "$tmp/munge/munge.key" || skip "mungekey failed"
munged -F --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/sock" \
    --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/log/munged.log" \
    --seed-file="$tmp/munge/seed" >"$tmp/log/munged.out" 2>&1 &
pids+=($!)
for i in $(seq 100); do [ -S "$tmp/munge/sock" ] && break; sleep 0.1; done
[ -S "$tmp/munge/sock" ] || { cat "$tmp/log/munged.out"; skip "munged did not start"; }
# two free ports (the kernel's picks, released just before the daemons bind them)
read -r ctld_port slurmd_port < <(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
cpus=$(nproc); [ "$cpus" -ge 2 ] || cpus=2 # (config_overrides: two tasks on a one-CPU host)
export SLURM_CONF=$tmp/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=rtstapci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$tmp/log/slurmd.out" 2>&1 &
pids+=($!)
state=""
deadline=$(( $(date +%s) + 60 ))
while [ "$(date +%s)" -lt "$deadline" ]; do
    state=$(timeout 5 sinfo -h -N -o %t 2>/dev/null)
    [ "$state" = idle ] && break
    sleep 0.5
done
if [ "$state" != idle ]; then
    tail -n 20 "$tmp"/log/*
    skip "the one-node cluster did not come up in 60 s (node: '${state:-no answer}')"
fi
echo "cli_slurm: munged, slurmctld, slurmd up in $(( $(date +%s) - started )) s (ports $ctld_port, $slurmd_port)"

# --- the page's scripts, cut to this node
# the N-th ```sh block after the N-th "cli_slurm.sh runs this script" marker
page_script() {
    awk -v want="$1" '/tests\/cli\/cli_slurm.sh runs this script/ { n++; next }
        n == want && /^```sh$/ { on = 1; next } on && /^```$/ { exit } on { print }' "$page"
}
to_ci() {
    sed -e 's/^#SBATCH --nodes=2$/#SBATCH --nodes=1/' \
        -e 's/^#SBATCH --ntasks-per-node=4 /#SBATCH --ntasks-per-node=2 /' \
        -e 's/^#SBATCH --cpus-per-task=16 */#SBATCH --cpus-per-task=1 /' \
        -e '/^#SBATCH --gpus-per-/d' -e 's/--readers 14 /--readers 1 /' \
        -e "s|/lustre/rec/|$tmp/rec/|g" -e "s|/lustre/out/|$tmp/out/|g"
}
mkdir "$tmp/bin" "$tmp/rec" "$tmp/out"
ln -s "$RTSTAP_BIN" "$tmp/bin/rtstap"
ln -s "$RTSTAP_MPI_BIN" "$tmp/bin/rtstap-mpi"
export PATH=$tmp/bin:$PATH
# CI runs as root in a container: Open MPI's mpirun asks for both; shared memory without CMA
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
for k in 1 2 3; do page_script $k | to_ci >"$tmp/script$k.sh"; done
check "docs/mpi.md: the batch script, the array and its summary found, /lustre and the GPUs all substituted" \
    '[ -s "$tmp/script1.sh" ] && [ -s "$tmp/script2.sh" ] && [ -s "$tmp/script3.sh" ] &&
     grep -q "^srun --mpi=pmix" "$tmp/script1.sh" && grep -q "^#SBATCH --array=" "$tmp/script2.sh" &&
     ! grep -q "/lustre\|gpus" "$tmp"/script*.sh && grep -q "^#SBATCH --nodes=1$" "$tmp/script1.sh"'
# the job's recording, and the serial run of the options the script gives
rtstap gen --preset ward --channels 6 --pulses 32 --range-gates 240 --cpis 8 --seed 48 \
    --out "$tmp/rec/flight42.h5" --quiet
rtstap run --input "$tmp/rec/flight42.h5" -o "$tmp/serial.h5" --readers 1 --quiet
sbatch_wait() { timeout 180 sbatch --wait --chdir="$tmp" "$@"; }
sbatch_wait -o "$tmp/out/job.out" "$tmp/script1.sh" >/dev/null
rc=$?
check "the batch script: exit 0 ($rc), 2 ranks, the serial run's file" \
    '[ $rc -eq 0 ] && "$same" "$tmp/serial.h5" "$tmp/out/flight42_stap.h5" /weights /detections /axes/input_cpi >/dev/null &&
     grep -q "\"ranks\":[[:space:]]*2" "$tmp/out/flight42_stap.json"' || cat "$tmp/out/job.out"

# the alternative: mpirun inside the allocation (its daemons through Slurm, no PMI plugin)
sbatch_wait -n 2 -o "$tmp/out/mpirun.out" --wrap "mpirun -n 2 --bind-to none rtstap-mpi run \
    --input $tmp/rec/flight42.h5 -o $tmp/out/mpirun.h5 --readers 1 --quiet" >/dev/null
rc=$?
check "mpirun -n 2 inside the allocation: exit 0 ($rc), the serial run's file" \
    '[ $rc -eq 0 ] && "$same" "$tmp/serial.h5" "$tmp/out/mpirun.h5" /weights /detections /axes/input_cpi >/dev/null' ||
    cat "$tmp/out/mpirun.out"

# --- srun without PMIx (this cluster's MpiDefault=none, Debian's default): one line, nothing written
timeout 120 srun -n 2 rtstap-mpi run --input "$tmp/rec/flight42.h5" -o "$tmp/out/nopmi.h5" \
    >"$tmp/nopmi.out" 2>"$tmp/nopmi.err"
rc=$?
check "srun without PMIx: exit non-zero ($rc), one line naming srun --mpi=pmix, no output" \
    '[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(grep -c "rtstap-mpi: error: srun started 2 tasks without an MPI world" "$tmp/nopmi.err")" = 1 ] &&
     grep -q "srun --mpi=pmix" "$tmp/nopmi.err" && ! grep -q "OMPI was not built" "$tmp/nopmi.err" &&
     [ ! -e "$tmp/out/nopmi.h5" ] && [ -z "$(find "$tmp/out" -name ".*.tmp.*")" ]' || cat "$tmp/nopmi.err"

# --- the archive: a two-task array (the second recording is not HDF5) and its summary
mkdir -p "$tmp/rec/campaign7"
cp "$tmp/rec/flight42.h5" "$tmp/rec/campaign7/a.h5"
head -c 4096 /dev/zero >"$tmp/rec/campaign7/b.h5"
rtstap run --input "$tmp/rec/campaign7/a.h5" -o "$tmp/serial_a.h5" --quiet
job=$(timeout 60 sbatch --parsable --chdir="$tmp" -o "$tmp/out/array-%a.out" --array=0-1 "$tmp/script2.sh")
sbatch_wait -o "$tmp/out/summary.out" --dependency=afterany:"$job" "$tmp/script3.sh" >/dev/null
rc=$?
check "the array: a's output is the serial run's, b failed; the summary names b alone, exit 1 ($rc)" \
    '[ $rc -eq 1 ] && "$same" "$tmp/serial_a.h5" "$tmp/out/campaign7/a_stap.h5" /weights /detections >/dev/null &&
     [ "$(cat "$tmp/out/campaign7/status/a")" = 0 ] && [ "$(cat "$tmp/out/campaign7/status/b")" = 1 ] &&
     [ ! -e "$tmp/out/campaign7/b_stap.h5" ] && grep -q "^failed: .*/b.h5: exit 1$" "$tmp/out/summary.out" &&
     ! grep -q "a.h5" "$tmp/out/summary.out" && grep -q "^1 of 2 recordings failed$" "$tmp/out/summary.out"' ||
    cat "$tmp"/out/*.out

echo "cli_slurm: $(( $(date +%s) - started )) s in all"
# the daemons stop, and none is left
daemons=("${pids[@]}")
trap - EXIT
stop
for p in "${daemons[@]}"; do check "daemon $p stopped" '! kill -0 "$p" 2>/dev/null'; done
exit $fail
