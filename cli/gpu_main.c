/*
 * memsim-gpu: the CUDA attention kernels (gpu/cuda/attn_gpu.cu) run, checked and timed.
 *
 *   memsim-gpu probe                      the device's name, or why there is none (exit 1)
 *   memsim-gpu check [config]             outputs against the CPU double-precision reference
 *   memsim-gpu run [config]               one run of the kernel(s), for Nsight Compute
 *   memsim-gpu time [config] [--reps R]   median times (CUDA events), FLOP/s, bandwidth
 *   memsim-gpu idle --ms T                a kernel that waits T ms and moves no data: under
 *                                         ncu, the traffic a kernel of that length gets anyway
 *
 * config: --kernel naive|flash2 --N LIST --N-kv K --d D --heads H --kv-heads H --batch B
 *         --dtype fp32|fp16|bf16 --causal --seed S (LIST: 128,512,1024; N_kv: keys and
 *         values, N by default; each N at most N_kv).
 * memsim gpucheck runs `memsim-gpu run` under ncu; the tables of docs/gpu.md come from these.
 */

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/formulas.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/optparse.h"
#include "gpu/cuda/attn_gpu.h"
#include "gpu/cuda/idle_gpu.h"
#include "kernels/attn.h"

struct opts {
	struct attn_config cfg;
	uint64_t Ns[32];
	unsigned nN;
	uint64_t seed;
	int reps;
};

static void
usage_text(FILE *f)
{
	fprintf(f, "memsim-gpu probe|idle --ms T|check|run|time [--kernel naive|flash2] [--N LIST] "
		   "[--N-kv K] [--d D] [--heads H] [--kv-heads H] [--batch B] "
		   "[--dtype fp32|fp16|bf16] [--causal] [--seed S] [--reps R]");
}

/* The option layer's one-line usage error (cli/optparse.c calls it), memsim-gpu's way: the
 * message, then the synopsis. */
int
usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	(void)cmd;
	fprintf(stderr, "memsim-gpu: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (");
	usage_text(stderr);
	fprintf(stderr, ")\n");
	return EXIT_USAGE;
}

static int
usage(const char *msg)
{
	return usage_error(NULL, "%s", msg);
}

static void
usage_out(FILE *f)
{
	usage_text(f);
	fprintf(f, "\n");
}

static struct opts *parsing; /* the config --N and --kernel fill */

/* --N LIST: up to 32 positive numbers, comma-separated. */
static int
n_list(const char *cmd, const struct optparse_option *opt, const char *value)
{
	char buf[256], *save = NULL;
	uint64_t v;

	(void)opt;
	snprintf(buf, sizeof(buf), "%s", value);
	parsing->nN = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!parse_u64(t, &v) || v == 0 || parsing->nN == 32)
			return usage_error(
				cmd, "--N: '%s' is not a list of up to 32 positive numbers", value);
		parsing->Ns[parsing->nN++] = v;
	}
	if (!parsing->nN)
		return usage_error(cmd, "--N: '%s' is not a list of up to 32 positive numbers",
				   value);
	return 0;
}

static int
dtype_value(const char *cmd, const struct optparse_option *opt, const char *value)
{
	(void)opt;
	if (!attn_dtype_parse(value, &parsing->cfg.dtype))
		return usage_error(cmd, "--dtype: '%s' is not fp32, fp16 or bf16", value);
	return 0;
}

static int
parse(int argc, char **argv, struct opts *o)
{
	static const char *const kernels[] = { "naive", "flash2", NULL };
	unsigned kernel = 1;
	uint64_t d = 64, heads = 1, kv_heads = 1, batch = 1, reps = 20, n_kv = 0;
	bool kv = false;
	const struct optparse_option opts[] = {
		{ "kernel", 0, OPTPARSE_CHOICE, .dest = &kernel, .words = kernels },
		{ "N", 0, OPTPARSE_CALL, .call = n_list },
		{ "N-kv", 0, OPTPARSE_U64, .dest = &n_kv, .min = 1,
		  .expect = "a positive whole number" },
		{ "d", 0, OPTPARSE_U64, .dest = &d, .min = 1, .expect = "a positive whole number" },
		{ "heads", 0, OPTPARSE_U64, .dest = &heads, .min = 1,
		  .expect = "a positive whole number" },
		{ "kv-heads", 0, OPTPARSE_U64, .dest = &kv_heads, .min = 1,
		  .expect = "a positive whole number", .given = &kv },
		{ "batch", 0, OPTPARSE_U64, .dest = &batch, .min = 1,
		  .expect = "a positive whole number" },
		{ "dtype", 0, OPTPARSE_CALL, .call = dtype_value },
		{ "causal", 0, OPTPARSE_FLAG, .dest = &o->cfg.causal },
		{ "seed", 0, OPTPARSE_U64, .dest = &o->seed },
		{ "reps", 0, OPTPARSE_U64, .dest = &reps, .min = 1, .max = 10000,
		  .expect = "a whole number from 1 to 10000" },
		{ .name = "help", .kind = OPTPARSE_HELP },
		{ .name = NULL },
	};
	const struct optparse_command cmd = { .name = argv[1],
					      .usage = usage_out,
					      .options = opts };
	int rc;

	memset(o, 0, sizeof(*o));
	o->cfg = (struct attn_config){ ATTN_FLASH2, 1024,  64,    1, 1, 1, ATTN_FP16, 64,
				       64,          false, false, 0, 0, 0, 0,         0 };
	o->Ns[0] = 1024;
	o->nN = 1;
	o->seed = 1;
	parsing = o;
	if ((rc = optparse_argv(&cmd, argc - 1, argv + 1)))
		return rc == OPTPARSE_HELP_SHOWN ? -1 : rc;
	if (optind != argc - 1)
		return usage("unexpected argument");
	o->cfg.kernel = kernel == 0 ? ATTN_NAIVE : ATTN_FLASH2;
	o->cfg.N_kv = n_kv;
	o->cfg.d = d;
	o->cfg.heads = heads;
	o->cfg.kv_heads = kv ? kv_heads : heads;
	o->cfg.batch = batch;
	o->reps = (int)reps;
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
	char err[512];
	double ms = 0;
	bool given = false;
	const struct optparse_option opts[] = {
		{ "ms", 0, OPTPARSE_POSITIVE, .dest = &ms, .given = &given,
		  .expect = "a positive number of milliseconds" },
		{ .name = "help", .kind = OPTPARSE_HELP },
		{ .name = NULL },
	};
	const struct optparse_command cmd = { .name = "idle", .usage = usage_out, .options = opts };
	int rc;

	if ((rc = optparse_argv(&cmd, argc - 1, argv + 1)))
		return rc == OPTPARSE_HELP_SHOWN ? 0 : rc;
	if (optind != argc - 1)
		return usage("idle: unexpected argument");
	if (!given)
		return usage("idle takes --ms T");
	if (idle_gpu_run(ms, err, sizeof(err))) {
		fprintf(stderr, "memsim-gpu: %s\n", err);
		return 1;
	}
	printf("idled %.3f ms\n", ms);
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
	if (strcmp(argv[1], "check") && strcmp(argv[1], "run") && strcmp(argv[1], "time"))
		return usage("unknown command");
	if ((rc = parse(argc, argv, &o)))
		return rc < 0 ? 0 : rc;
	for (unsigned i = 0; i < o.nN; i++)
		if ((rc = one(argv[1], &o, o.Ns[i], i == 0)))
			return rc;
	return 0;
}
