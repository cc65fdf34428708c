/*
 * `memsim gpucheck`: the CUDA kernels' DRAM traffic measured by Nsight Compute next to memsim's
 * prediction for the same kernels and sizes.
 *
 * memsim's side models each kernel launch as Nsight Compute measures it: ncu flushes and
 * invalidates the caches before every kernel it profiles (its default --cache-control all), and
 * dirty lines still in L2 when the kernel ends are written back by the next flush, outside
 * every kernel's counters. So every launch (naive: scores, softmax, av; flash2: one) is
 * simulated on a fresh cache of the preset, and its DRAM bytes are counted without the final
 * flush; with the flush added they are shown too, to see which matches.
 *
 * The memsim side can be computed on a machine without a GPU (--no-gpu --json FILE) and read
 * back on the GPU machine (--memsim-from FILE), where the simulation of the largest sizes would
 * cost device time.
 */

#include "config.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/formulas.h"
#include "analysis/report.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "gpu/cuda_blocks.h"
#include "gpu/sdpa_plan.h"
#include "kernels/attn.h"
#include "measure/ncu.h"
#include "measure/spawn.h"
#include "sim/trace.h"

#define LAUNCH_MAX 3
#define GPU_TOLERANCE 0.15

static const char *const ncu_metrics[] = {
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"lts__t_sectors_srcunit_tex_op_read.sum",
	"lts__t_sectors_srcunit_tex_op_write.sum",
	"gpu__time_duration.sum",
};
#define NCU_NMETRICS 5

struct launch {
	char name[32];
	double read, write,
		flush; /* memsim: DRAM bytes read, written during, written by the flush */
	uint32_t slots; /* --model blocks: blocks resident at once */
	bool measured, bg_measured;
	double ncu_read, ncu_write, l2_read, l2_write, ns; /* ncu */
	double bg_read, bg_write; /* ncu on the idle kernel, scaled to the launch's time */
};

struct gpucheck {
	struct attn_config cfg;
	char cache[256];
	bool blocks; /* --model blocks, else sequential */
	bool hashed; /* --l2-model hashed (blocks only) */
	unsigned nlaunch;
	struct launch l[LAUNCH_MAX];
	double lab, exact, flops;
	char device[128];
};

void
usage_gpucheck(FILE *f)
{
	fprintf(f,
		"Usage: memsim gpucheck --kernel naive|flash2 [--N N] [--N-kv K] [--d D] [--heads H]\n"
		"                       [--kv-heads H] [--batch B] [--dtype fp32|fp16|bf16]\n"
		"                       [--causal]\n"
		"                       [--cache SPEC] [--model blocks|sequential]\n"
		"                       [--l2-model lru|hashed] [--no-gpu]\n"
		"                       [--memsim-from FILE] [--no-idle] [--json FILE]\n"
		"\n"
		"Runs the CUDA kernels (memsim-gpu) under Nsight Compute and prints, per kernel\n"
		"launch and in total: the lab formula, the exact formula, memsim's DRAM bytes on the\n"
		"cache preset [h100] with each launch starting cold and without the final flush (as\n"
		"ncu counts), memsim with the flush, ncu's DRAM and L2 bytes, the DRAM bytes an\n"
		"idle kernel as long as the launch is charged under ncu (the background, taken\n"
		"off ncu's bytes: net), and the ratios.\n"
		"  --model blocks      memsim's side as the GPU runs it [default]: the launch's\n"
		"                      thread blocks in flight on the H100's SMs (as many as\n"
		"                      its occupancy allows), a step each in turn, through the\n"
		"                      one cache model\n"
		"  --model sequential  the traced CPU kernel: the same blocks one after another\n"
		"  --l2-model hashed   with --model blocks: the H100's L2 as its microbenchmarks\n"
		"                      show it (docs/gpu.md; memsim sdpa's) instead of the cache\n"
		"                      preset's LRU [lru]\n"
		"  --no-gpu            only memsim's side (with --json, for --memsim-from)\n"
		"  --memsim-from FILE  memsim's side from an earlier --no-gpu --json run\n"
		"  --no-idle           do not measure the background (net = ncu's bytes)\n"
		"MEMSIM_NCU names ncu [ncu on PATH]; memsim-gpu is found beside memsim\n"
		"(MEMSIM_GPU overrides).\n");
}

/* memsim's side under --model blocks: each launch's thread blocks in flight on a fresh cache
 * (gpu/cuda_blocks.h). */
static int
model_blocks(struct gpucheck *g, const struct spec *spec, char *err, size_t errlen)
{
	const struct sdpa_gpu *h100 = sdpa_gpu_find("h100");
	/* the hashed L2 of memsim sdpa --l2-model hashed, every set simulated */
	const struct l2sets_config hashed = {
		h100->l2_hashed_bytes,      h100->l2_hashed_ways, 1, h100->l2_hashed_dirty_ways,
		h100->l2_hashed_partitions, L2SETS_LRU,           0, false
	};

	g->nlaunch = cuda_blocks_launches(&g->cfg);
	for (unsigned i = 0; i < g->nlaunch; i++) {
		struct cuda_blocks_result r;

		if (cuda_blocks_simulate(&g->cfg, i, &spec->cache, g->hashed ? &hashed : NULL,
					 &cuda_blocks_h100, &r, err, errlen))
			return -1;
		snprintf(g->l[i].name, sizeof(g->l[i].name), "%s",
			 g->cfg.kernel == ATTN_FLASH2 ? "flash2"
						      : attn_phase_name(g->cfg.kernel, i));
		g->l[i].read = (double)r.read_bytes;
		g->l[i].write = (double)r.write_bytes;
		g->l[i].flush = (double)r.flush_write_bytes;
		g->l[i].slots = r.slots;
	}
	return 0;
}

/* memsim's side: each launch on a fresh cache, trace-only (the counters need no values, and
 * the arrays then need no memory: any size the GPU takes runs here). */
static int
model(struct gpucheck *g, const struct spec *spec, char *err, size_t errlen)
{
	struct attn_data *d;
	struct formula_machine m;
	struct formula_result f;

	formula_machine_from_spec(spec, false, &m);
	if (formula_eval(&g->cfg, &m, &f) == 0) {
		g->lab = f.lab_bytes;
		g->exact = f.read_bytes + f.write_bytes;
	}
	g->flops = attn_flops(&g->cfg);
	if (g->blocks)
		return model_blocks(g, spec, err, errlen);
	d = attn_data_create_trace_only(&g->cfg, err, errlen);
	if (!d)
		return -1;
	g->nlaunch = g->cfg.kernel == ATTN_NAIVE ? 3 : 1;
	for (unsigned i = 0; i < g->nlaunch; i++) {
		struct cache *c = cache_create(&spec->cache);
		struct trace_ctx *t;
		const struct cache_traffic *dram;

		if (!c) {
			/* The spec parsed: what fails here is the allocation. */
			snprintf(err, errlen, "cannot allocate the cache model (%.1f MiB)",
				 (double)cache_model_bytes(&spec->cache) / 1048576.0);
			attn_data_destroy(d);
			return -1;
		}
		t = trace_ctx_create(c, NULL, spec->tiles_in_scratch);
		attn_run_traced_phase(d, t, i);
		trace_ctx_destroy(t);
		snprintf(g->l[i].name, sizeof(g->l[i].name), "%s",
			 attn_phase_name(g->cfg.kernel, i));
		if (g->cfg.kernel == ATTN_FLASH2)
			snprintf(g->l[i].name, sizeof(g->l[i].name), "flash2");
		dram = cache_dram(c);
		g->l[i].read = (double)dram->read_bytes;
		g->l[i].write = (double)dram->write_bytes;
		cache_flush(c);
		/* cache_dram() sums anew at each call: read the total again */
		g->l[i].flush = (double)cache_dram(c)->write_bytes - g->l[i].write;
		cache_destroy(c);
	}
	attn_data_destroy(d);
	return 0;
}

/* memsim's side as JSON (for --memsim-from), and back. */
static cJSON *
model_json(const struct gpucheck *g)
{
	cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "launches");

	cJSON_AddStringToObject(o, "cache", g->cache);
	cJSON_AddStringToObject(o, "model", g->blocks ? "blocks" : "sequential");
	if (g->blocks)
		cJSON_AddStringToObject(o, "l2_model", g->hashed ? "hashed" : "lru");
	cJSON_AddNumberToObject(o, "lab_formula_bytes", g->lab);
	cJSON_AddNumberToObject(o, "exact_formula_bytes", g->exact);
	cJSON_AddNumberToObject(o, "flops", g->flops);
	for (unsigned i = 0; i < g->nlaunch; i++) {
		cJSON *l = cJSON_CreateObject();

		cJSON_AddStringToObject(l, "name", g->l[i].name);
		cJSON_AddNumberToObject(l, "memsim_read_bytes", g->l[i].read);
		cJSON_AddNumberToObject(l, "memsim_write_bytes", g->l[i].write);
		cJSON_AddNumberToObject(l, "memsim_flush_write_bytes", g->l[i].flush);
		if (g->blocks)
			cJSON_AddNumberToObject(l, "slots", g->l[i].slots);
		if (g->l[i].measured) {
			cJSON_AddNumberToObject(l, "ncu_dram_read_bytes", g->l[i].ncu_read);
			cJSON_AddNumberToObject(l, "ncu_dram_write_bytes", g->l[i].ncu_write);
			cJSON_AddNumberToObject(l, "ncu_l2_read_bytes", g->l[i].l2_read);
			cJSON_AddNumberToObject(l, "ncu_l2_write_bytes", g->l[i].l2_write);
			cJSON_AddNumberToObject(l, "ncu_ns", g->l[i].ns);
		}
		if (g->l[i].bg_measured) {
			cJSON_AddNumberToObject(l, "idle_dram_read_bytes", g->l[i].bg_read);
			cJSON_AddNumberToObject(l, "idle_dram_write_bytes", g->l[i].bg_write);
		}
		cJSON_AddItemToArray(arr, l);
	}
	return o;
}

/* Whether the "config" of a gpucheck --json file is c's. */
static bool
side_matches(const cJSON *cfg, const struct attn_config *c)
{
	const char *kernel = cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "kernel"));
	const char *dtype = cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "dtype"));
	/* files written before N_kv existed have N keys */
	const cJSON *nkv = cJSON_GetObjectItem(cfg, "N_kv");

	return cfg && kernel && dtype && !strcmp(kernel, attn_kernel_name(c->kernel)) &&
	       !strcmp(dtype, attn_dtype_name(c->dtype)) &&
	       cJSON_GetNumberValue(cJSON_GetObjectItem(cfg, "N")) == (double)c->N &&
	       (nkv ? cJSON_GetNumberValue(nkv) : (double)c->N) == (double)attn_nkv(c) &&
	       cJSON_GetNumberValue(cJSON_GetObjectItem(cfg, "d")) == (double)c->d &&
	       cJSON_GetNumberValue(cJSON_GetObjectItem(cfg, "heads")) == (double)c->heads &&
	       cJSON_GetNumberValue(cJSON_GetObjectItem(cfg, "kv_heads")) == (double)c->kv_heads &&
	       cJSON_GetNumberValue(cJSON_GetObjectItem(cfg, "batch")) == (double)c->batch &&
	       cJSON_IsTrue(cJSON_GetObjectItem(cfg, "causal")) == c->causal;
}

static int
model_from_json(struct gpucheck *g, const char *path, char *err, size_t errlen)
{
	cJSON *root = report_read_json(path, err, errlen), *m, *l;
	const cJSON *cfg;
	const char *model, *l2;
	char theirs[64], ours[64];
	unsigned n = 0;

	if (!root)
		return -1;
	m = cJSON_GetObjectItem(root, "memsim");
	cfg = cJSON_GetObjectItem(root, "config");
	/* the configuration must be the one asked for */
	if (!m || !side_matches(cfg, &g->cfg)) {
		snprintf(err, errlen, "%s: not memsim's side of this configuration", path);
		cJSON_Delete(root);
		return -1;
	}
	/* and of the model asked for (files written before --model: sequential; before
	 * --l2-model: lru) */
	model = cJSON_GetStringValue(cJSON_GetObjectItem(m, "model"));
	l2 = cJSON_GetStringValue(cJSON_GetObjectItem(m, "l2_model"));
	snprintf(theirs, sizeof(theirs), "%s", model ? model : "sequential");
	if (!strcmp(theirs, "blocks"))
		snprintf(theirs, sizeof(theirs), "blocks --l2-model %s", l2 ? l2 : "lru");
	snprintf(ours, sizeof(ours), "%s",
		 !g->blocks ? "sequential" : g->hashed ? "blocks --l2-model hashed"
						       : "blocks --l2-model lru");
	if (strcmp(theirs, ours)) {
		snprintf(err, errlen, "%s: memsim's side under --model %s, not %s", path, theirs,
			 ours);
		cJSON_Delete(root);
		return -1;
	}
	snprintf(g->cache, sizeof(g->cache), "%s",
		 cJSON_GetStringValue(cJSON_GetObjectItem(m, "cache"))
			 ? cJSON_GetStringValue(cJSON_GetObjectItem(m, "cache"))
			 : "?");
	g->lab = cJSON_GetNumberValue(cJSON_GetObjectItem(m, "lab_formula_bytes"));
	g->exact = cJSON_GetNumberValue(cJSON_GetObjectItem(m, "exact_formula_bytes"));
	g->flops = cJSON_GetNumberValue(cJSON_GetObjectItem(m, "flops"));
	cJSON_ArrayForEach (l, cJSON_GetObjectItem(m, "launches")) {
		if (n == LAUNCH_MAX)
			break;
		snprintf(g->l[n].name, sizeof(g->l[n].name), "%s",
			 cJSON_GetStringValue(cJSON_GetObjectItem(l, "name"))
				 ? cJSON_GetStringValue(cJSON_GetObjectItem(l, "name"))
				 : "?");
		g->l[n].read = cJSON_GetNumberValue(cJSON_GetObjectItem(l, "memsim_read_bytes"));
		g->l[n].write = cJSON_GetNumberValue(cJSON_GetObjectItem(l, "memsim_write_bytes"));
		g->l[n].flush =
			cJSON_GetNumberValue(cJSON_GetObjectItem(l, "memsim_flush_write_bytes"));
		g->l[n].slots = (uint32_t)cJSON_GetNumberValue(cJSON_GetObjectItem(l, "slots"));
		n++;
	}
	g->nlaunch = n;
	cJSON_Delete(root);
	if (n != (g->cfg.kernel == ATTN_NAIVE ? 3u : 1u)) {
		snprintf(err, errlen, "%s: not memsim's side of this configuration", path);
		return -1;
	}
	return 0;
}

/* The program to run: env override, else beside this memsim. */
static bool
find_gpu_program(char *out, size_t len)
{
	const char *env = getenv("MEMSIM_GPU");
	char self[4096];
	ssize_t n;

	if (env && *env) {
		snprintf(out, len, "%s", env);
		return access(out, X_OK) == 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return false;
	self[n] = '\0';
	snprintf(out, len, "%s/memsim-gpu", dirname(self));
	return access(out, X_OK) == 0;
}

/* The text of a file, or NULL. */
static char *
read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	long n = 0;

	if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
		text = xzalloc((size_t)n + 1);
		if (fread(text, 1, (size_t)n, f) != (size_t)n)
			text[0] = '\0';
	}
	if (f)
		fclose(f);
	return text;
}

/* ncu on `memsim-gpu ARGS...` (NULL-terminated) with the given metrics, expecting nexpect
 * kernel launches; its CSV parsed into res. ncu's default cache control (flush and invalidate
 * before every kernel) is kept; clock control is off so the GPU runs as it would unprofiled. */
static int
profile(const char *ncu, const char *gpu, char *const *args, const char *const *metrics,
	unsigned nmetrics, const char *dir, unsigned nexpect, struct ncu_result *res, char *err,
	size_t errlen)
{
	char list[512] = "", out[300], log[300], why[512], *text;
	char *argv[48] = { (char *)ncu,
			   "--csv",
			   "--page",
			   "raw",
			   "--print-units",
			   "base",
			   "--print-kernel-base",
			   "function",
			   "--clock-control",
			   "none",
			   "--metrics",
			   list,
			   (char *)gpu };
	unsigned n = 13;
	int rc;

	for (unsigned i = 0; i < nmetrics; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? "," : "",
			 metrics[i]);
	for (unsigned i = 0; args[i] && n + 1 < sizeof(argv) / sizeof(argv[0]); i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	snprintf(out, sizeof(out), "%s/ncu.csv", dir);
	snprintf(log, sizeof(log), "%s/ncu.log", dir);
	rc = spawn_wait(argv, out, log, why, sizeof(why));
	if (rc != 0) {
		spawn_last_line(log, why, sizeof(why));
		snprintf(err, errlen, "ncu failed (exit status %d): %s (its log: %s)", rc,
			 why[0] ? why : "no message", log);
		return -1;
	}
	text = read_text(out);
	if (!text) {
		snprintf(err, errlen, "cannot read %s", out);
		return -1;
	}
	rc = ncu_parse(text, metrics, nmetrics, res, err, errlen);
	free(text);
	if (rc)
		return -1;
	if (res->nkernels != nexpect) {
		snprintf(err, errlen, "ncu profiled %u kernels, expected %u (%s)", res->nkernels,
			 nexpect, out);
		return -1;
	}
	unlink(out);
	unlink(log);
	return 0;
}

/*
 * The background: the DRAM bytes a kernel of the launch's length is charged for without
 * moving any. On an H100 under ncu, something outside the SMs writes into L2 (evict-first
 * sectors of device memory, from no SM and no other L2 partition) and part of it reaches
 * DRAM, in proportion to the launch's time (docs/gpu.md, "Running the GPU check"). `memsim-gpu
 * idle` waits as long as the launch (at least IDLE_MIN_MS, then scaled to the launch's time) and
 * ncu counts what it gets.
 */
#define IDLE_MIN_MS 10.0

static int
background(const char *ncu, const char *gpu, const char *dir, struct launch *l, char *err,
	   size_t errlen)
{
	static const char *const idle_metrics[] = { "dram__bytes_read.sum", "dram__bytes_write.sum",
						    "gpu__time_duration.sum" };
	double ms = l->ns * 1e-6 > IDLE_MIN_MS ? l->ns * 1e-6 : IDLE_MIN_MS, scale;
	char mstr[32];
	char *args[] = { "idle", "--ms", mstr, NULL };
	struct ncu_result res;

	snprintf(mstr, sizeof(mstr), "%.3f", ms);
	if (profile(ncu, gpu, args, idle_metrics, 3, dir, 1, &res, err, errlen))
		return -1;
	if (!(res.kernels[0].value[2] > 0)) {
		snprintf(err, errlen, "ncu gave the idle kernel no duration");
		return -1;
	}
	scale = l->ns / res.kernels[0].value[2];
	l->bg_read = res.kernels[0].value[0] * scale;
	l->bg_write = res.kernels[0].value[1] * scale;
	l->bg_measured = true;
	return 0;
}

/* ncu on memsim-gpu run, then on the idle kernel per launch; fills the launches' ncu side. */
static int
measure(struct gpucheck *g, uint64_t seed, bool with_background, char *err, size_t errlen)
{
	char gpu[4200], ncu[4096], dir[256], log[300];
	const char *tmp = getenv("TMPDIR");
	char nstr[32], nkvstr[32], dstr[32], hstr[32], kvstr[32], bstr[32], sstr[32];
	const char *nenv = getenv("MEMSIM_NCU");
	struct ncu_result res;
	int rc;

	if (!find_gpu_program(gpu, sizeof(gpu))) {
		snprintf(err, errlen,
			 "memsim-gpu not found beside memsim: this memsim was built "
			 "without CUDA (nvcc missing or -Dcuda=disabled)");
		return -1;
	}
	if (!spawn_find(nenv && *nenv ? nenv : "ncu", ncu, sizeof(ncu))) {
		snprintf(err, errlen,
			 "%s not found%s: Nsight Compute is needed (it comes with the "
			 "CUDA toolkit)",
			 nenv && *nenv ? nenv : "ncu", nenv && *nenv ? "" : " on PATH");
		return -1;
	}
	/* ncu's files go to a directory of our own in $TMPDIR; a failing ncu's stay there, for
	 * the message names its log. */
	if (!tmp || tmp[0] != '/' || strlen(tmp) > 200)
		tmp = "/tmp";
	if (make_private_dir(tmp, "memsim-gpucheck", dir, sizeof(dir), err, errlen))
		return -1;
	snprintf(log, sizeof(log), "%s/probe.log", dir);
	{
		char *probe[] = { gpu, "probe", NULL }, why[512];

		rc = spawn_wait(probe, NULL, log, why, sizeof(why));
		if (rc != 0) {
			spawn_last_line(log, why, sizeof(why));
			snprintf(err, errlen, "%s", why[0] ? why : "no usable CUDA device");
			/* The message holds the log's last words: nothing to keep. */
			unlink(log);
			rmdir(dir);
			return -1;
		}
		unlink(log);
	}
	snprintf(nstr, sizeof(nstr), "%llu", (unsigned long long)g->cfg.N);
	snprintf(nkvstr, sizeof(nkvstr), "%llu", (unsigned long long)attn_nkv(&g->cfg));
	snprintf(dstr, sizeof(dstr), "%llu", (unsigned long long)g->cfg.d);
	snprintf(hstr, sizeof(hstr), "%llu", (unsigned long long)g->cfg.heads);
	snprintf(kvstr, sizeof(kvstr), "%llu", (unsigned long long)g->cfg.kv_heads);
	snprintf(bstr, sizeof(bstr), "%llu", (unsigned long long)g->cfg.batch);
	snprintf(sstr, sizeof(sstr), "%llu", (unsigned long long)seed);
	{
		char *args[] = { "run",        "--kernel", (char *)attn_kernel_name(g->cfg.kernel),
				 "--N",        nstr,       "--N-kv",
				 nkvstr,       "--d",
				 dstr,         "--heads",  hstr,
				 "--kv-heads", kvstr,      "--batch",
				 bstr,         "--dtype",  (char *)attn_dtype_name(g->cfg.dtype),
				 "--seed",     sstr,       g->cfg.causal ? "--causal" : NULL,
				 NULL };

		if (profile(ncu, gpu, args, ncu_metrics, NCU_NMETRICS, dir, g->nlaunch, &res, err,
			    errlen))
			return -1;
	}
	for (unsigned i = 0; i < g->nlaunch; i++) {
		struct launch *l = &g->l[i];

		l->measured = true;
		l->ncu_read = res.kernels[i].value[0];
		l->ncu_write = res.kernels[i].value[1];
		l->l2_read = res.kernels[i].value[2] * 32; /* 32-byte sectors */
		l->l2_write = res.kernels[i].value[3] * 32;
		l->ns = res.kernels[i].value[4];
		if (with_background && background(ncu, gpu, dir, l, err, errlen))
			return -1;
	}
	rmdir(dir);
	return 0;
}

static void
print_table(const struct gpucheck *g)
{
	double mr = 0, mw = 0, mf = 0, nr = 0, nw = 0, bg = 0, l2 = 0, ns = 0;
	char buf[256];
	bool measured = g->nlaunch && g->l[0].measured;
	bool with_bg = measured && g->l[0].bg_measured;

	printf("memsim gpucheck: %s%s%s\ncache model: %s, each launch from a cold cache\n",
	       kernel_config_str(&g->cfg, buf, sizeof(buf)), g->device[0] ? " on " : "", g->device,
	       g->cache);
	if (g->blocks) {
		printf("model: thread blocks in flight (--model blocks, --l2-model %s):",
		       g->hashed ? "hashed" : "lru");
		for (unsigned i = 0; i < g->nlaunch; i++)
			printf(" %s %u", g->l[i].name, g->l[i].slots);
		printf(" at once\n\n");
	} else {
		printf("model: the traced kernel, blocks one after another (--model sequential)\n\n");
	}
	printf("%-8s %12s %12s %12s %11s %11s %9s %11s %10s %10s %10s\n", "launch", "memsim rd MB",
	       "memsim wr MB", "+flush wr MB", "ncu rd MB", "ncu wr MB", "idle MB", "ncu L2 MB",
	       "net/memsim", "ncu/memsim", "net/+flush");
	for (unsigned i = 0; i <= g->nlaunch; i++) {
		const struct launch *l = i < g->nlaunch ? &g->l[i] : NULL;
		double r = l ? l->read : mr, w = l ? l->write : mw, f = l ? l->flush : mf;
		double a = l ? l->ncu_read : nr, b = l ? l->ncu_write : nw;
		double z = l ? l->bg_read + l->bg_write : bg;
		double c = l ? l->l2_read + l->l2_write : l2;

		if (l) {
			mr += r;
			mw += w;
			mf += f;
			nr += a;
			nw += b;
			bg += z;
			l2 += c;
			ns += l->ns;
		}
		printf("%-8s %12.3f %12.3f %12.3f", l ? l->name : "total", r / 1e6, w / 1e6,
		       (w + f) / 1e6);
		if (!measured) {
			printf(" %11s %11s %9s %11s %10s %10s %10s\n", "-", "-", "-", "-", "-", "-",
			       "-");
			continue;
		}
		printf(" %11.3f %11.3f", a / 1e6, b / 1e6);
		if (with_bg)
			printf(" %9.3f", z / 1e6);
		else
			printf(" %9s", "-");
		printf(" %11.3f", c / 1e6);
		if (with_bg)
			printf(" %10.3f", (a + b - z) / (r + w));
		else
			printf(" %10s", "-");
		printf(" %10.3f", (a + b) / (r + w));
		if (with_bg)
			printf(" %10.3f\n", (a + b - z) / (r + w + f));
		else
			printf(" %10s\n", "-");
	}
	printf("\nformulas (whole kernel): lab %.3f MB (memsim / lab %.3f), exact %.3f MB on the "
	       "cache preset as one run (memsim with flush / exact %.3f)\n",
	       g->lab / 1e6, g->lab > 0 ? (mr + mw) / g->lab : 0, g->exact / 1e6,
	       g->exact > 0 ? (mr + mw + mf) / g->exact : 0);
	if (measured) {
		double m = mr + mw, meas = nr + nw - bg;

		printf("ncu time %.4f ms, %.1f GB/s of DRAM traffic, %.2f TFLOP/s\n", ns * 1e-6,
		       (nr + nw) / ns, g->flops / ns * 1e-3);
		if (with_bg)
			printf("idle: an idle kernel as long as each launch is charged %.3f MB of "
			       "DRAM traffic under ncu (not the kernel's); net = ncu - idle\n",
			       bg / 1e6);
		else
			printf("idle: not measured (--no-idle); ncu's bytes are compared as they "
			       "are\n");
		printf("verdict: ncu's %s DRAM bytes are %s memsim's without the flush (%+.1f%%; "
		       "tolerance %.0f%%) and %+.1f%% off memsim's with it\n",
		       with_bg ? "net" : "raw",
		       meas <= m * (1 + GPU_TOLERANCE) && meas >= m * (1 - GPU_TOLERANCE)
			       ? "within"
			       : "outside",
		       100 * (meas / m - 1), GPU_TOLERANCE * 100, 100 * (meas / (m + mf) - 1));
	}
}

struct gpucheck_options {
	bool no_gpu, idle, blocks, hashed;
	const char *from;
	struct kernel_options *o;
};

/* --memsim-from: memsim's side is read, not simulated: the arrays need no memory. */
static int
from_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	struct gpucheck_options *g = opt->dest;

	(void)cmd;
	g->from = arg;
	g->o->need_memory = false;
	return 0;
}

static int
model_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	if (strcmp(arg, "blocks") && strcmp(arg, "sequential"))
		return usage_error(cmd, "--model: blocks or sequential, not '%s'", arg);
	*(bool *)opt->dest = strcmp(arg, "blocks") == 0;
	return 0;
}

static int
l2_model_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	if (strcmp(arg, "lru") && strcmp(arg, "hashed"))
		return usage_error(cmd, "--l2-model: lru or hashed, not '%s'", arg);
	*(bool *)opt->dest = strcmp(arg, "hashed") == 0;
	return 0;
}

int
cmd_gpucheck(int argc, char **argv)
{
	struct kernel_options o;
	struct gpucheck_options go = { false, true, true, false, NULL, &o };
	const struct optparse_option extra[] = {
		{ "no-gpu", 0, OPTPARSE_FLAG, .dest = &go.no_gpu },
		{ "no-idle", 0, OPTPARSE_CLEAR, .dest = &go.idle },
		{ "model", 0, OPTPARSE_CALL, .dest = &go.blocks, .call = model_value },
		{ "l2-model", 0, OPTPARSE_CALL, .dest = &go.hashed, .call = l2_model_value },
		{ "memsim-from", 0, OPTPARSE_CALL, .dest = &go, .call = from_value },
		{ .name = NULL },
	};
	const struct kernel_command cmd = { "gpucheck", usage_gpucheck, extra };
	struct spec spec;
	struct gpucheck g;
	bool no_gpu, idle;
	const char *from;
	char err[1024];
	int rc;

	kernel_options_init(&o);
	o.cache_text = "h100";
	o.cfg.dtype = ATTN_FP16;
	o.trace_only = true; /* memsim's side (model()) */
	if ((rc = kernel_options_parse(&o, &spec, &cmd, argc, argv)))
		return rc == OPTPARSE_HELP_SHOWN ? EXIT_OK : rc;
	no_gpu = go.no_gpu;
	idle = go.idle;
	from = go.from;
	if (o.cfg.kernel != ATTN_NAIVE && o.cfg.kernel != ATTN_FLASH2)
		return usage_error("gpucheck", "--kernel: the GPU kernels are naive and flash2");
	if (o.cfg.d > 128 || o.cfg.softmax_separate)
		return usage_error("gpucheck", "the GPU kernels take d <= 128, P over S");
	if (o.cfg.kv_page)
		return usage_error("gpucheck",
				   "--kv-page: the GPU kernels take an unpaged KV cache");
	if (no_gpu && from)
		return usage_error("gpucheck", "--no-gpu and --memsim-from exclude each other");
	memset(&g, 0, sizeof(g));
	g.cfg = o.cfg;
	g.blocks = go.blocks;
	g.hashed = go.hashed;
	if (g.hashed && !g.blocks)
		return usage_error("gpucheck", "--l2-model hashed: only with --model blocks");
	spec_format(&spec, g.cache, sizeof(g.cache));
	if (from ? model_from_json(&g, from, err, sizeof(err))
		 : model(&g, &spec, err, sizeof(err))) {
		print_error("gpucheck: %s", err);
		return EXIT_RUNTIME;
	}
	if (!no_gpu && measure(&g, o.seed, idle, err, sizeof(err))) {
		print_error("gpucheck: %s", err);
		return EXIT_RUNTIME;
	}
	print_table(&g);
	if (o.json_path) {
		cJSON *root = cJSON_CreateObject();

		report_add_header(root, argc, argv);
		report_add_config(root, &g.cfg, &spec, false, o.seed);
		cJSON_AddItemToObject(root, "memsim", model_json(&g));
		if (report_write_json(o.json_path, root, err, sizeof(err))) {
			print_error("gpucheck: %s", err);
			cJSON_Delete(root);
			return EXIT_RUNTIME;
		}
		cJSON_Delete(root);
	}
	return EXIT_OK;
}
