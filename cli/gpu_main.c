/*
 * memsim-gpu: the CUDA attention kernels (kernels/cuda/attn_gpu.cu) run, checked and timed.
 *
 *   memsim-gpu probe                      the device's name, or why there is none (exit 1)
 *   memsim-gpu check [config]             outputs against the CPU double-precision reference
 *   memsim-gpu run [config]               one run of the kernel(s), for Nsight Compute
 *   memsim-gpu time [config] [--reps R]   median times (CUDA events), FLOP/s, bandwidth
 *   memsim-gpu idle --ms T                a kernel that waits T ms and moves no data: under
 *                                         ncu, the traffic a kernel of that length gets anyway
 *   memsim-gpu l2probe --kind K [...]     one L2 microbenchmark (kernels/cuda/l2probe_gpu.h;
 *                                         tools/gpu-l2/probe.sh runs a grid under ncu):
 *       --kind rewrite [--tile KIB] [--region KIB] [--steps S] [--local] [--out-tile KIB]
 *       --kind tiles [--tile KIB] [--total MIB] [--stream MIB]
 *       --kind crossread [--tile KIB] [--buffer MIB] [--lag K] [--same-half]
 *
 * config: --kernel naive|flash2 --N LIST --N-kv K --d D --heads H --kv-heads H --batch B
 *         --dtype fp32|fp16|bf16 --causal --seed S (LIST: 128,512,1024; N_kv: keys and
 *         values, N by default; each N at most N_kv).
 * memsim gpucheck runs `memsim-gpu run` under ncu; the tables of docs/gpu.md come from these.
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/formulas.h"
#include "kernels/attn.h"
#include "kernels/cuda/attn_gpu.h"
#include "kernels/cuda/idle_gpu.h"
#include "kernels/cuda/l2probe_gpu.h"
#include "sim/util.h"

struct opts {
	struct attn_config cfg;
	uint64_t Ns[32];
	unsigned nN;
	uint64_t seed;
	int reps;
};

static int
usage(const char *msg)
{
	fprintf(stderr,
		"memsim-gpu: %s (memsim-gpu probe|idle --ms T|l2probe --kind rewrite|tiles|crossread "
		"[--tile KIB] [--region KIB] [--steps S] [--local] [--out-tile KIB] [--total MIB] [--stream MIB] "
		"[--buffer MIB] "
		"[--lag K] [--same-half]|check|run|time [--kernel naive|flash2] "
		"[--N LIST] [--N-kv K] [--d D] [--heads H] [--kv-heads H] [--batch B] [--dtype "
		"fp32|fp16|bf16] [--causal] [--seed S] [--reps R])\n",
		msg);
	return 2;
}

static int
parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = { { "kernel", required_argument, NULL, 'k' },
					    { "N", required_argument, NULL, 'n' },
					    { "N-kv", required_argument, NULL, 'K' },
					    { "d", required_argument, NULL, 'd' },
					    { "heads", required_argument, NULL, 'h' },
					    { "kv-heads", required_argument, NULL, 'v' },
					    { "batch", required_argument, NULL, 'b' },
					    { "dtype", required_argument, NULL, 't' },
					    { "causal", no_argument, NULL, 'c' },
					    { "seed", required_argument, NULL, 's' },
					    { "reps", required_argument, NULL, 'r' },
					    { NULL, 0, NULL, 0 } };
	bool kv = false;
	int opt;
	uint64_t v;

	memset(o, 0, sizeof(*o));
	o->cfg = (struct attn_config){ ATTN_FLASH2, 1024,  64,    1, 1, 1, ATTN_FP16, 64,
				       64,          false, false, 0, 0, 0, 0,         0 };
	o->Ns[0] = 1024;
	o->nN = 1;
	o->seed = 1;
	o->reps = 20;
	optind = 2;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'k':
			if (!attn_kernel_parse(optarg, &o->cfg.kernel) ||
			    (o->cfg.kernel != ATTN_NAIVE && o->cfg.kernel != ATTN_FLASH2))
				return usage("--kernel: naive or flash2");
			break;
		case 'n': {
			char buf[256], *save = NULL;

			snprintf(buf, sizeof(buf), "%s", optarg);
			o->nN = 0;
			for (char *t = strtok_r(buf, ",", &save); t;
			     t = strtok_r(NULL, ",", &save)) {
				if (!parse_u64(t, &v) || v == 0 || o->nN == 32)
					return usage("--N: a list of positive numbers");
				o->Ns[o->nN++] = v;
			}
			if (!o->nN)
				return usage("--N: a list of positive numbers");
			break;
		}
		case 'K':
			if (!parse_u64(optarg, &v) || v == 0)
				return usage("--N-kv: a positive whole number");
			o->cfg.N_kv = v;
			break;
		case 'd':
		case 'h':
		case 'v':
		case 'b':
		case 's':
		case 'r':
			if (!parse_u64(optarg, &v) || (v == 0 && opt != 's'))
				return usage("a size option takes a positive whole number");
			if (opt == 'd')
				o->cfg.d = v;
			else if (opt == 'h')
				o->cfg.heads = v;
			else if (opt == 'v') {
				o->cfg.kv_heads = v;
				kv = true;
			} else if (opt == 'b')
				o->cfg.batch = v;
			else if (opt == 's')
				o->seed = v;
			else
				o->reps = (int)(v > 10000 ? 10000 : v);
			break;
		case 't':
			if (!attn_dtype_parse(optarg, &o->cfg.dtype))
				return usage("--dtype: fp32, fp16 or bf16");
			break;
		case 'c':
			o->cfg.causal = true;
			break;
		default:
			return usage("unknown option");
		}
	}
	if (optind != argc)
		return usage("unexpected argument");
	if (!kv)
		o->cfg.kv_heads = o->cfg.heads;
	return 0;
}

static struct attn_gpu_config
gpu_config(const struct attn_config *c)
{
	struct attn_gpu_config g;

	memset(&g, 0, sizeof(g));
	g.flash2 = c->kernel == ATTN_FLASH2;
	g.N = c->N;
	g.N_kv = attn_nkv(c);
	g.d = c->d;
	g.heads = c->heads;
	g.kv_heads = c->kv_heads;
	g.batch = c->batch;
	g.storage = c->dtype == ATTN_BF16 ? 2 : c->dtype == ATTN_FP16 ? 1 : 0;
	g.causal = c->causal;
	return g;
}

/* Host data with the inputs only: flash2's arrays (no N x N matrix on the host). */
static struct attn_data *
host_data(const struct attn_config *c, bool reference, uint64_t seed, char *err, size_t errlen)
{
	struct attn_config h = *c;
	struct attn_data *d;

	if (!reference)
		h.kernel = ATTN_FLASH2;
	if (attn_config_check(&h, err, errlen))
		return NULL;
	d = attn_data_create(&h, err, errlen);
	if (d)
		attn_data_fill(d, seed);
	return d;
}

static int
one(const char *cmd, struct opts *o, uint64_t N, bool header)
{
	struct attn_config c = o->cfg;
	struct attn_gpu_config gc;
	struct attn_gpu *g = NULL;
	struct attn_data *d;
	char err[512], name[256], cfgs[96];
	bool check = strcmp(cmd, "check") == 0;
	int rc = 1;

	c.N = N;
	gc = gpu_config(&c);
	d = host_data(&c, check, o->seed, err, sizeof(err));
	if (!d) {
		fprintf(stderr, "memsim-gpu: %s\n", err);
		return 1;
	}
	if (attn_gpu_create(&gc, &g, name, sizeof(name), err, sizeof(err)) ||
	    attn_gpu_upload(g, d->Q, d->K, d->V, err, sizeof(err)))
		goto fail;
	snprintf(cfgs, sizeof(cfgs), "%s N=%llu N_kv=%llu d=%llu heads=%llu %s%s",
		 attn_kernel_name(c.kernel), (unsigned long long)N,
		 (unsigned long long)attn_nkv(&c), (unsigned long long)c.d,
		 (unsigned long long)c.heads, attn_dtype_name(c.dtype), c.causal ? " causal" : "");
	if (strcmp(cmd, "run") == 0 || check) {
		if (attn_gpu_run(g, err, sizeof(err)))
			goto fail;
	}
	if (strcmp(cmd, "run") == 0) {
		printf("ran %s on %s\n", cfgs, name);
	} else if (check) {
		struct attn_error e;

		if (attn_gpu_download(g, d->O, d->lse, err, sizeof(err)))
			goto fail;
		e = attn_check(d);
		printf("check %-36s on %s: max error %.3e (bound %.3e), %llu non-finite, %s\n",
		       cfgs, name, e.max_abs, e.bound, (unsigned long long)e.nonfinite,
		       e.pass ? "pass" : "FAIL");
		if (!e.pass) {
			rc = 1;
			goto out;
		}
	} else {
		double ms, each[3] = { 0, 0, 0 }, flops = attn_flops(&c), lab = formula_lab(&c);

		if (attn_gpu_time(g, 3, o->reps, &ms, each, err, sizeof(err)))
			goto fail;
		if (header)
			printf("%-7s %6s %4s %5s %5s %10s %10s %10s %10s %10s %12s\n", "kernel",
			       "S", "d", "heads", "dtype", "ms", "scores ms", "softmax ms", "av ms",
			       "TFLOP/s", "GB/s (lab)");
		printf("%-7s %6llu %4llu %5llu %5s %10.4f %10.4f %10.4f %10.4f %10.2f %12.1f\n",
		       attn_kernel_name(c.kernel), (unsigned long long)N, (unsigned long long)c.d,
		       (unsigned long long)c.heads, attn_dtype_name(c.dtype), ms, each[0], each[1],
		       each[2], flops / (ms * 1e-3) * 1e-12, lab / (ms * 1e-3) * 1e-9);
	}
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "memsim-gpu: %s\n", err);
out:
	attn_gpu_destroy(g);
	attn_data_destroy(d);
	return rc;
}

/* memsim-gpu idle --ms T */
static int
idle(int argc, char **argv)
{
	char err[512], *end;
	double ms;

	if (argc != 4 || strcmp(argv[2], "--ms"))
		return usage("idle takes --ms T");
	ms = strtod(argv[3], &end);
	if (end == argv[3] || *end || !(ms > 0))
		return usage("--ms must be a positive number of milliseconds");
	if (idle_gpu_run(ms, err, sizeof(err))) {
		fprintf(stderr, "memsim-gpu: %s\n", err);
		return 1;
	}
	printf("idled %.3f ms\n", ms);
	return 0;
}

/* memsim-gpu l2probe: an option of another kind is refused rather than ignored. */
static int
l2probe_parse(int argc, char **argv, struct l2probe_config *c)
{
	static const struct option lo[] = { { "kind", required_argument, NULL, 'k' },
					    { "tile", required_argument, NULL, 't' },
					    { "region", required_argument, NULL, 'r' },
					    { "steps", required_argument, NULL, 's' },
					    { "total", required_argument, NULL, 'T' },
					    { "stream", required_argument, NULL, 'S' },
					    { "buffer", required_argument, NULL, 'b' },
					    { "lag", required_argument, NULL, 'l' },
					    { "same-half", no_argument, NULL, 'h' },
					    { "local", no_argument, NULL, 'L' },
					    { "out-tile", required_argument, NULL, 'o' },
					    { NULL, 0, NULL, 0 } };
	/* the options each kind takes, by their short letter */
	static const char *const takes[] = { "trsLo", "tTS", "tblh" };
	char seen[16] = "", err[256];
	bool kind = false;
	int opt, idx, n = 0;
	uint64_t v;

	*c = (struct l2probe_config){ L2PROBE_REWRITE, 32 << 10, 4 << 10, 124, 64 << 20, 0,
				      40 << 20, 8, true, false, 0 };
	optind = 2;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", lo, &idx)) != -1) {
		if (opt == 'k') {
			if (!strcmp(optarg, "rewrite"))
				c->kind = L2PROBE_REWRITE;
			else if (!strcmp(optarg, "tiles"))
				c->kind = L2PROBE_TILES;
			else if (!strcmp(optarg, "crossread"))
				c->kind = L2PROBE_CROSSREAD;
			else
				return usage("--kind: rewrite, tiles or crossread");
			kind = true;
			continue;
		}
		if (opt == '?' || opt == ':')
			return usage("l2probe: unknown option or missing value");
		if (opt == 'h') {
			c->cross = false;
		} else if (opt == 'L') {
			c->local = true;
		} else if (!parse_u64(optarg, &v) || v > (1u << 30) ||
			   (v == 0 && opt != 'r' && opt != 'S' && opt != 'o')) {
			snprintf(err, sizeof(err), "--%s: a %s whole number", lo[idx].name,
				 opt == 'r' || opt == 'S' || opt == 'o' ? "non-negative" : "positive");
			return usage(err);
		} else if (opt == 't') {
			c->tile = v << 10;
		} else if (opt == 'r') {
			c->region = v << 10;
		} else if (opt == 'o') {
			c->out_tile = v << 10;
		} else if (opt == 's') {
			c->steps = v;
		} else if (opt == 'T') {
			c->total = v << 20;
		} else if (opt == 'S') {
			c->stream = v << 20;
		} else if (opt == 'b') {
			c->buffer = v << 20;
		} else {
			c->lag = v;
		}
		if (n < (int)sizeof(seen) - 1)
			seen[n++] = (char)opt;
	}
	if (optind != argc)
		return usage("l2probe: unexpected argument");
	if (!kind)
		return usage("l2probe: --kind is needed");
	for (const char *o = seen; *o; o++)
		if (!strchr(takes[c->kind], *o)) {
			for (idx = 0; lo[idx].val != *o; idx++)
				;
			snprintf(err, sizeof(err), "--%s: not an option of --kind %s",
				 lo[idx].name, l2probe_kind_name(c->kind));
			return usage(err);
		}
	if (l2probe_config_check(c, err, sizeof(err)))
		return usage(err);
	return 0;
}

/* memsim-gpu l2probe: one kernel, and one line with what it asked for (tools/gpu-l2/). */
static int
l2probe(int argc, char **argv)
{
	struct l2probe_config c;
	struct l2probe_result r;
	char err[512];
	int rc;

	if ((rc = l2probe_parse(argc, argv, &c)))
		return rc;
	if (l2probe_gpu_run(&c, &r, err, sizeof(err))) {
		fprintf(stderr, "memsim-gpu: %s\n", err);
		return 1;
	}
	printf("l2probe kind=%s sms=%u blocks=%u tile=%llu region=%llu local=%d steps=%llu "
	       "total=%llu "
	       "stream=%llu buffer=%llu lag=%llu cross=%d read_bytes=%llu write_bytes=%llu "
	       "rewritten=%llu reread=%llu reuse_distance=%llu out_tile=%llu pid=%ld device=%s\n",
	       l2probe_kind_name(c.kind), r.sms, r.blocks, (unsigned long long)c.tile,
	       (unsigned long long)(c.kind == L2PROBE_REWRITE ? c.region : 0),
	       c.kind == L2PROBE_REWRITE && c.local,
	       (unsigned long long)r.steps,
	       (unsigned long long)(c.kind == L2PROBE_TILES ? c.total : 0),
	       (unsigned long long)(c.kind == L2PROBE_TILES ? c.stream : 0),
	       (unsigned long long)(c.kind == L2PROBE_CROSSREAD ? c.buffer : 0),
	       (unsigned long long)(c.kind == L2PROBE_CROSSREAD ? c.lag : 0),
	       c.kind == L2PROBE_CROSSREAD && c.cross, (unsigned long long)r.read_bytes,
	       (unsigned long long)r.write_bytes, (unsigned long long)r.rewritten,
	       (unsigned long long)r.reread, (unsigned long long)r.reuse_distance,
	       (unsigned long long)(c.kind == L2PROBE_REWRITE ? c.out_tile : 0), (long)getpid(),
	       r.device);
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o;
	char err[512];
	int rc;

	if (argc < 2)
		return usage("a command is needed");
	if (strcmp(argv[1], "probe") == 0) {
		if (!attn_gpu_available(err, sizeof(err))) {
			fprintf(stderr, "memsim-gpu: %s\n", err);
			return 1;
		}
		printf("a CUDA device is available\n");
		return 0;
	}
	if (strcmp(argv[1], "idle") == 0)
		return idle(argc, argv);
	if (strcmp(argv[1], "l2probe") == 0)
		return l2probe(argc, argv);
	if (strcmp(argv[1], "check") && strcmp(argv[1], "run") && strcmp(argv[1], "time"))
		return usage("unknown command");
	if ((rc = parse(argc, argv, &o)))
		return rc;
	for (unsigned i = 0; i < o.nN; i++)
		if ((rc = one(argv[1], &o, o.Ns[i], i == 0)))
			return rc;
	return 0;
}
