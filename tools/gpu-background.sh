#!/bin/sh
# Where flash2's extra DRAM bytes at N = 16384 come from (docs/gpu.md): on a machine with
# an NVIDIA GPU and Nsight Compute, after tools/gpu-bundle.sh. Writes to $OUT (or out/gpu):
#   l2-write-sources.tgz  flash2 (N, heads) = (16384, 16|8|4), (8192, 16), (4096, 16) with
#                         every L2 write-sector count by source unit and eviction policy
#   idle-sweep.csv        the idle kernel for 10 .. 1222 ms (flash2's lengths), and flash2
#                         N = 16384 with the same metrics
export LD_LIBRARY_PATH="$PWD/dev${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OUT="${OUT:-out/gpu}"
mkdir -p "$OUT/src"
ncu_raw() { ncu --csv --page raw --print-units base --print-kernel-base function \
	--clock-control none "$@"; }
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ncu --version | tail -1
# every L2 sector count of writes by source (tex: the SMs, ltcfabric: the other L2 partition)
ncu --query-metrics --chip gh100 | awk '{print $1}' >"$OUT/src/metrics.txt"
L=$(grep -E '^lts__t_sectors_(srcunit|srcnode)_[a-z0-9]+_op_(read|write)$|^lts__t_sectors_op_(read|write)$|^lts__t_sectors_.*evict.*$|^lts__d_sectors_fill.*$' \
	"$OUT/src/metrics.txt" | grep -v -E '_(hit|miss)_rate|pct' | sed 's/$/.sum/' | paste -sd, -)
for cfg in "16384 16" "16384 8" "16384 4" "8192 16" "4096 16"; do
	set -- $cfg
	echo "flash2 N=$1 heads=$2"
	ncu_raw --metrics "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,$L" \
		dev/memsim-gpu run --kernel flash2 --N "$1" --heads "$2" --d 64 --dtype fp16 \
		>"$OUT/src/flash2-$1-$2.csv" 2>&1 || echo "flash2 N=$1 heads=$2 failed"
done
tar czf "$OUT/l2-write-sources.tgz" -C "$OUT/src" . && rm -rf "$OUT/src"
# the idle kernel: what a kernel of that length is charged for without moving any data
M=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_write_evict_first.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_evict_first.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_l1_op_write.sum,lts__t_sectors_srcunit_ltcfabric_op_write.sum,lts__d_sectors_fill_device.sum,lts__d_sectors_fill_sysmem.sum,lts__t_sectors_aperture_device_op_write_evict_first.sum,lts__t_sectors_aperture_sysmem_op_write_evict_first.sum,lts__t_sectors_aperture_peer_op_write_evict_first.sum
: >"$OUT/idle-sweep.csv"
for ms in 10 77 306 612 1222; do
	echo "idle $ms ms" | tee -a "$OUT/idle-sweep.csv"
	ncu_raw --metrics $M dev/memsim-gpu idle --ms $ms 2>&1 | grep -v '^==' >>"$OUT/idle-sweep.csv"
done
echo "idle 612 ms, --cache-control none" | tee -a "$OUT/idle-sweep.csv"
ncu_raw --cache-control none --metrics $M dev/memsim-gpu idle --ms 612 2>&1 | grep -v '^==' \
	>>"$OUT/idle-sweep.csv"
echo "flash2 N=16384 heads=16" | tee -a "$OUT/idle-sweep.csv"
ncu_raw --metrics $M dev/memsim-gpu run --kernel flash2 --N 16384 --heads 16 --d 64 \
	--dtype fp16 2>&1 | grep -v '^==' >>"$OUT/idle-sweep.csv"
