/*
 * `memsim sdpa`: the HBM bytes of PyTorch's F.scaled_dot_product_attention (flash backend) on
 * a GPU, from the GPU model of FlashAttention-2's kernels (gpu/sdpa_sim.h).
 */

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analysis/report.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/optparse.h"
#include "gpu/sdpa_sim.h"

/* The most block steps (sdpa_steps()) a shape may take to simulate: past it, a mistyped size
 * (2^30 for 2^20) would run for years. */
#define SDPA_STEPS_MAX 1e10

void
usage_sdpa(FILE *f)
{
	fprintf(f, "Usage: memsim sdpa --q B,H,N,D --k B,Hkv,Nkv,D [--v B,Hkv,Nkv,D]\n"
		   "                   [--causal] [--dtype fp16|bf16] [--gpu h100] [--json FILE]\n"
		   "                   [--l2 SIZE] [--l2-model lru|random|partitions|hashed]\n"
		   "                   [--l2-ways W] [--slots S] [--no-spill]\n"
		   "                   [--l2-line-ways W] [--l2-dirty-ways D] [--l2-partitions P]\n"
		   "                   [--l2-policy lru|srrip|random] [--l2-sample K]\n"
		   "                   [--l2-hash lines|pages] [--l2-hash-seed S]\n"
		   "\n"
		   "What F.scaled_dot_product_attention(q, k, v) with PyTorch's flash backend\n"
		   "moves to and from the GPU's memory (HBM), shapes as PyTorch's\n"
		   "[batch, heads, seq, d]: the kernel FlashAttention-2 launches\n"
		   "(flash_fwd_kernel, or flash_fwd_splitkv_kernel and its combine kernel for\n"
		   "split-KV decode), its tiles and grid, DRAM bytes read and written as Nsight\n"
		   "Compute counts them, and the time and tokens/s bounds at the HBM bandwidth.\n"
		   "The model: thread blocks in grid order on the SMs' block slots, one K/V tile\n"
		   "step a round, with the registers they spill, through the L2 as the H100's\n"
		   "microbenchmarks measured it (docs/gpu.md, \"PyTorch SDPA\").\n"
		   "\n"
		   "  --q, --k, --v   shapes; v defaults to k's and must equal it; k's heads\n"
		   "                  must divide q's (PyTorch's enable_gqa)\n"
		   "  --causal        is_causal=True (the mask aligned at the end)\n"
		   "  --dtype T       fp16 or bf16 [fp16]; fp32 is refused, as the flash\n"
		   "                  backend refuses it\n"
		   "  --gpu NAME      h100 or h200 [h100]: 132 SMs each; 3.35 TB/s and a 50 MiB L2\n"
		   "                  (H100 SXM5 datasheet), 4.8 TB/s and a 60 MiB L2 (H200 SXM\n"
		   "                  datasheet; the L2 as the device reports it)\n"
		   "  --json FILE     the report as JSON (- for stdout)\n"
		   "The model's knobs, for trying alternatives (docs/gpu.md compares them):\n"
		   "  --l2 SIZE       the L2's size [hashed: 50M on h100, 60M on h200; the\n"
		   "                  others: what one kernel keeps, 22M and 28M, docs/gpu.md]\n"
		   "  --l2-model M    hashed [hashed]: 128-byte lines hashed to sets, line by\n"
		   "                  line on sampled sets, the model that reproduces the H100's\n"
		   "                  L2 microbenchmarks (docs/gpu.md); lru (one\n"
		   "                  LRU of whole tiles), random (random replacement),\n"
		   "                  partitions (two LRUs of SIZE / 2, each tile's halves\n"
		   "                  homed one in each, a copy kept on the reading side)\n"
		   "hashed's options:\n"
		   "  --l2-line-ways W  lines a set holds, 1 to 64 [32]\n"
		   "  --l2-dirty-ways D dirty lines a set keeps, more are written back and kept\n"
		   "                  clean [16]; 0: no cap\n"
		   "  --l2-partitions P 1, or 2: halves of SIZE, each line homed in one, a line\n"
		   "                  read from the other side copied into the near half [2]\n"
		   "  --l2-policy P   lru, srrip (2-bit re-reference prediction), random [lru]\n"
		   "  --l2-sample K   simulate 1 set in K, a power of two [16]\n"
		   "  --l2-hash H     lines (each line of a tile to a set at random) or pages\n"
		   "                  (lines by address, 2 MiB pages coloured at random, as\n"
		   "                  the H100's eviction sets show: 16 ways, 25 x 512 sets a\n"
		   "                  partition; docs/gpu.md) [lines]\n"
		   "  --l2-hash-seed S  the pages' colours [0]\n"
		   "the others' option:\n"
		   "  --l2-ways W     K/V tiles a set holds (4 or more), tiles hashed to sets\n"
		   "                  [0: fully associative]\n"
		   "and all:\n"
		   "  --slots S       resident blocks [SMs x blocks per SM from occupancy]\n"
		   "  --no-spill      leave out the registers the forward kernel spills (its\n"
		   "                  local frame, read off its SASS; docs/gpu.md)\n"
		   "\n"
		   "The work: the blocks' steps (one K/V tile of a block each), at most 1e10;\n"
		   "on a terminal a progress line counts them.\n"
		   "\n"
		   "Exit status: 0 ok, 1 out of memory, 2 bad options, a shape the flash\n"
		   "backend refuses, or one past the steps' limit.\n");
}

/* "B,H,N,D": four whole numbers. */
static bool
parse_shape(const char *text, uint64_t v[4])
{
	char buf[128], *save = NULL, *tok;
	unsigned n = 0;

	if (strlen(text) >= sizeof(buf))
		return false;
	strcpy(buf, text);
	if (!buf[0] || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,"))
		return false;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == 4 || !parse_u64(tok, &v[n]))
			return false;
		n++;
	}
	return n == 4;
}

struct sdpa_args {
	uint64_t q[4], k[4], v[4];
	bool have_q, have_k, have_v, causal, bf16;
	const char *gpu, *json_path;
	uint64_t l2, slots, ways, line_ways, dirty_ways, sample, partitions, hash_seed;
	unsigned hash; /* --l2-hash: 0 lines, 1 pages */
	bool no_spill;
	bool knob;              /* an option that changes the model (not its sample) */
	const char *hashed_opt; /* the last option only --l2-model hashed takes (its name) */
	const char *tile_opt;   /* the option only the tile models take (its name) */
	unsigned model;         /* --l2-model: an index into l2_models */
	enum sdpa_backend backend;
	enum l2sets_policy policy;
};

/* --l2-model's values; the last (hashed) is the default. */
static const char *const l2_models[] = { "lru", "random", "partitions", "hashed", NULL };

/* --q, --k, --v: B,H,N,D into the four numbers at opt->dest */
static int
shape_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	if (!parse_shape(arg, opt->dest))
		return usage_error(cmd, "--%s: '%s' is not B,H,N,D (four numbers)", opt->name, arg);
	return 0;
}

/* --dtype: fp16 or bf16 (bf16: true into the bool at opt->dest) */
static int
dtype_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	if (strcmp(arg, "fp32") == 0)
		return usage_error(cmd, "--dtype fp32: PyTorch's flash backend takes only fp16 and "
					"bf16 (fp32 runs on another backend, not modelled)");
	if (strcmp(arg, "fp16") && strcmp(arg, "bf16"))
		return usage_error(cmd, "--dtype: '%s' is not fp16 or bf16", arg);
	*(bool *)opt->dest = strcmp(arg, "bf16") == 0;
	return 0;
}

/* --l2-ways: 0 (fully associative), or enough K/V tiles a set for any tile */
static int
l2_ways_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	static const char expect[] = "0 or a number from 4 to 1000000";
	const struct optparse_option ways = { .name = opt->name,
					      .kind = OPTPARSE_U64,
					      .dest = opt->dest,
					      .max = 1000000,
					      .expect = expect };
	uint64_t *v = opt->dest;

	if (optparse_value(cmd, &ways, arg))
		return EXIT_USAGE;
	if (*v > 0 && *v < 4)
		return usage_error(cmd, "--%s: '%s' is not %s", opt->name, arg, expect);
	return 0;
}

/* Each option given: those of one kind of L2 model remembered, to refuse them with another. */
static int
sdpa_each(void *ctx, const struct optparse_option *opt, const char *value)
{
	static const char *const hashed[] = { "l2-partitions", "l2-policy", "l2-line-ways",
					      "l2-dirty-ways", "l2-sample", "l2-hash",
					      "l2-hash-seed" };
	static const char *const knobs[] = {
		"l2",        "slots",         "l2-ways",  "l2-line-ways", "l2-dirty-ways",
		"l2-policy", "l2-partitions", "no-spill", "l2-hash",      "l2-hash-seed"
	};
	struct sdpa_args *a = ctx;

	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		if (strcmp(opt->name, knobs[i]) == 0)
			a->knob = true;

	for (size_t i = 0; i < sizeof(hashed) / sizeof(hashed[0]); i++)
		if (strcmp(opt->name, hashed[i]) == 0)
			a->hashed_opt = opt->name;
	if (strcmp(opt->name, "l2-ways") == 0)
		a->tile_opt = opt->name;
	return 0;
}

static int
parse_args(int argc, char **argv, struct sdpa_args *a)
{
	static const char *const partitions[] = { "1", "2", NULL };
	static const char *const hashes[] = { "lines", "pages", NULL };
	unsigned parts = 0;
	bool dirty_given = false, parts_given = false;
	const struct optparse_option opts[] = {
		{ "q", 0, OPTPARSE_CALL, .dest = a->q, .call = shape_value, .given = &a->have_q },
		{ "k", 0, OPTPARSE_CALL, .dest = a->k, .call = shape_value, .given = &a->have_k },
		{ "v", 0, OPTPARSE_CALL, .dest = a->v, .call = shape_value, .given = &a->have_v },
		{ "causal", 0, OPTPARSE_FLAG, .dest = &a->causal },
		{ "dtype", 0, OPTPARSE_CALL, .dest = &a->bf16, .call = dtype_value },
		{ "gpu", 0, OPTPARSE_STRING, .dest = &a->gpu },
		/* at least 1M: every tile (64 KiB at most) fits many times */
		{ "l2", 0, OPTPARSE_SIZE, .dest = &a->l2, .min = 1u << 20, .max = 1ull << 40,
		  .expect = "a size from 1M to 1T" },
		{ "slots", 0, OPTPARSE_U64, .dest = &a->slots, .min = 1, .max = 1000000,
		  .expect = "a number from 1 to 1000000" },
		{ "l2-ways", 0, OPTPARSE_CALL, .dest = &a->ways, .call = l2_ways_value },
		{ "l2-model", 0, OPTPARSE_CHOICE, .dest = &a->model, .words = l2_models },
		{ "l2-line-ways", 0, OPTPARSE_U64, .dest = &a->line_ways, .min = 1,
		  .max = L2SETS_WAYS_MAX,
		  .expect = "a number from 1 to " OPTPARSE_STR(L2SETS_WAYS_MAX) },
		{ "l2-dirty-ways", 0, OPTPARSE_U64, .dest = &a->dirty_ways, .max = L2SETS_WAYS_MAX,
		  .expect = "a number from 0 to " OPTPARSE_STR(L2SETS_WAYS_MAX),
		  .given = &dirty_given },
		{ "l2-policy", 0, OPTPARSE_CALL, .dest = &a->policy, .call = l2_policy_option },
		{ "l2-sample", 0, OPTPARSE_U64, .dest = &a->sample, .min = 1, .max = 1u << 20,
		  .expect = "a number from 1 to 1048576" },
		{ "l2-partitions", 0, OPTPARSE_CHOICE, .dest = &parts, .words = partitions,
		  .given = &parts_given },
		{ "l2-hash", 0, OPTPARSE_CHOICE, .dest = &a->hash, .words = hashes },
		{ "l2-hash-seed", 0, OPTPARSE_U64, .dest = &a->hash_seed, .max = UINT64_MAX,
		  .expect = "a number" },
		{ "no-spill", 0, OPTPARSE_FLAG, .dest = &a->no_spill },
		{ "json", 'j', OPTPARSE_STRING, .dest = &a->json_path },
		{ .name = "help", .letter = 'h', .kind = OPTPARSE_HELP },
		{ .name = NULL },
	};
	const struct optparse_command cmd = {
		.name = "sdpa", .usage = usage_sdpa, .options = opts, .each = sdpa_each, .ctx = a
	};
	int rc;

	*a = (struct sdpa_args){ .gpu = "h100", .model = 3 };
	if ((rc = optparse_argv(&cmd, argc, argv)))
		return rc;
	if (optind != argc)
		return usage_error("sdpa", "unexpected argument '%s'", argv[optind]);
	a->knob |= a->model != 3;
	a->backend = a->model == 2   ? SDPA_BACKEND_PARTITIONS
		     : a->model == 3 ? SDPA_BACKEND_HASHED
				     : SDPA_BACKEND_TILES;
	if (dirty_given && a->dirty_ways == 0)
		a->dirty_ways = UINT32_MAX; /* none */
	if (parts_given)
		a->partitions = parts + 1;
	if (a->hashed_opt && a->backend != SDPA_BACKEND_HASHED)
		return usage_error("sdpa", "--%s: only with --l2-model hashed", a->hashed_opt);
	if (a->tile_opt && a->backend == SDPA_BACKEND_HASHED)
		return usage_error("sdpa", "--%s: only with --l2-model lru, random or partitions",
				   a->tile_opt);
	return 0;
}

/* The shape from the arguments; a usage error when they disagree. */
static int
make_shape(const struct sdpa_args *a, struct sdpa_shape *s)
{
	const char *why;

	if (!a->have_q || !a->have_k)
		return usage_error("sdpa", "sdpa needs --q B,H,N,D and --k B,Hkv,Nkv,D");
	if (a->have_v && memcmp(a->k, a->v, sizeof(a->k)))
		return usage_error("sdpa", "--v must have k's shape (the flash backend takes one "
					   "head dim for K and V)");
	if (a->q[0] != a->k[0])
		return usage_error("sdpa", "q's batch (%llu) and k's (%llu) differ",
				   (unsigned long long)a->q[0], (unsigned long long)a->k[0]);
	if (a->q[3] != a->k[3])
		return usage_error("sdpa", "q's d (%llu) and k's (%llu) differ",
				   (unsigned long long)a->q[3], (unsigned long long)a->k[3]);
	for (unsigned i = 0; i < 4; i++)
		if (a->q[i] > UINT32_MAX || a->k[i] > UINT32_MAX)
			return usage_error("sdpa", "a dimension is larger than 2^32 - 1");
	*s = (struct sdpa_shape){
		(uint32_t)a->q[0], (uint32_t)a->q[1], (uint32_t)a->k[1], a->q[2],
		a->k[2],           (uint32_t)a->q[3], a->causal,         a->bf16
	};
	if ((why = sdpa_shape_check(s)))
		return usage_error("sdpa", "%s", why);
	return 0;
}

static const char *
kernel_name(const struct sdpa_plan *p)
{
	return p->splits > 1 ? "flash_fwd_splitkv_kernel" : "flash_fwd_kernel";
}

/* The L2's read lookup misses, where the model counts them, as ncu names them. */
static void
print_lookup(FILE *out, const struct sdpa_result *r)
{
	double miss = (double)(r->main.read_lookup_miss_bytes + r->combine.read_lookup_miss_bytes);
	double rd = (double)(r->main.read_bytes + r->combine.read_bytes);

	if (!r->main.lookup_known)
		return;
	fprintf(out,
		"L2 read lookup misses (ncu's lts__t_sectors_srcunit_tex_op_read_lookup_miss): "
		"%.2f MB",
		miss / 1e6);
	if (r->model.backend == SDPA_BACKEND_HASHED && r->model.partitions == 2)
		fprintf(out, ", %.2f MB of them served by the other partition", (miss - rd) / 1e6);
	fprintf(out, "\n");
}

/* How the default model did on the measured shapes of this kind: a number is only as good as
 * that, and the user should see it beside the number. NULL with another model's knobs. */
static const struct sdpa_validation *
validation(const struct sdpa_args *a, const struct sdpa_plan *p, const struct sdpa_gpu *g)
{
	return a->knob ? NULL : sdpa_validation_of(&p->shape, g);
}

static void
print_validation(FILE *out, const struct sdpa_validation *v, const struct sdpa_gpu *g)
{
	char gpu[8];
	size_t i;

	if (!v) {
		fprintf(out, "against Nsight Compute: not measured for these model options "
			     "(docs/gpu.md measures the default model on the h100 and the h200)\n");
		return;
	}
	for (i = 0; g->name[i] && i + 1 < sizeof(gpu); i++)
		gpu[i] = (char)(g->name[i] == 'h' ? 'H' : g->name[i]);
	gpu[i] = '\0';
	fprintf(out,
		"against Nsight Compute: on the %u measured shapes of this kind (%s) the model's "
		"bytes were %.3f to %.3f of the %s's%s%s\n",
		v->shapes, v->kind, v->lo, v->hi, gpu, v->note ? "; " : "", v->note ? v->note : "");
}

static void
print_text(FILE *out, const struct sdpa_args *a, const struct sdpa_plan *p,
	   const struct sdpa_gpu *g, const struct sdpa_result *r)
{
	double rd = (double)(r->main.read_bytes + r->combine.read_bytes);
	double wr = (double)(r->main.write_bytes + r->combine.write_bytes);
	double t = (rd + wr) / g->hbm_bytes_per_s, tokens = (double)p->shape.batch * p->shape.n_q;

	fprintf(out, "memsim sdpa: q [%llu,%llu,%llu,%llu] k [%llu,%llu,%llu,%llu]%s %s on %s\n",
		(unsigned long long)a->q[0], (unsigned long long)a->q[1],
		(unsigned long long)a->q[2], (unsigned long long)a->q[3],
		(unsigned long long)a->k[0], (unsigned long long)a->k[1],
		(unsigned long long)a->k[2], (unsigned long long)a->k[3],
		p->causal ? " causal" : "", a->bf16 ? "bf16" : "fp16", g->name);
	fprintf(out,
		"kernel: %s (%s), tiles %u x %u (kBlockM x kBlockN), %u warps, grid (%u, %u, %u)"
		" = %llu blocks, %u per SM: %u slots, %.2f waves\n",
		kernel_name(p), p->splits > 1 ? "split-KV decode" : "prefill", p->block_m,
		p->block_n, p->warps, p->grid[0], p->grid[1], p->grid[2],
		(unsigned long long)sdpa_blocks(p), p->blocks_per_sm, r->slots,
		(double)sdpa_blocks(p) / r->slots);
	if (p->splits > 1)
		fprintf(out,
			"split-KV: %u splits, then flash_fwd_splitkv_combine_kernel, grid (%llu),"
			" %u rows a block\n",
			p->splits, (unsigned long long)p->combine_grid, p->combine_block_m);
	if (p->spill_cold + p->spill_hot)
		fprintf(out,
			"spilled registers: %u bytes a block stored once, %u every K/V step (the "
			"kernel's local frame, from its SASS)\n",
			p->spill_cold, p->spill_hot);
	if (p->swapped)
		fprintf(out,
			"grouped decode: the %u query heads of each KV head run as %llu query "
			"rows (seqlenq_ngroups_swapped)\n",
			p->shape.heads / p->shape.kv_heads, (unsigned long long)p->nq);
	if (r->model.backend == SDPA_BACKEND_HASHED)
		fprintf(out,
			"L2: %.1f MiB in %u partition%s of %u-way %s sets, lines hashed to them%s, at "
			"most %u dirty lines a set, 1 set in %u simulated, cold at each kernel, no "
			"final flush (as ncu counts)\n\n",
			(double)r->l2_bytes / 1048576, r->model.partitions,
			r->model.partitions == 1 ? "" : "s", r->model.line_ways,
			l2sets_policy_str(r->model.policy),
			r->model.by_page ? " by 2 MiB page (pages coloured at random)" : "",
			r->model.dirty_ways ? r->model.dirty_ways : r->model.line_ways,
			r->model.sample);
	else
		fprintf(out,
			"L2: one LRU of %.1f MiB, cold at each kernel, no final flush (as ncu "
			"counts)\n\n",
			(double)r->l2_bytes / 1048576);
	fprintf(out, "%-10s %16s %16s\n", "array", "read bytes", "write bytes");
	for (unsigned i = 0; i < SDPA_ARRAYS; i++) {
		uint64_t x = r->main.read[i] + r->combine.read[i];
		uint64_t y = r->main.write[i] + r->combine.write[i];

		if (x || y)
			fprintf(out, "%-10s %16llu %16llu\n", sdpa_array_name(i),
				(unsigned long long)x, (unsigned long long)y);
	}
	fprintf(out, "%-10s %16.0f %16.0f\n\n", "total", rd, wr);
	fprintf(out, "DRAM: %.2f MB read, %.2f MB written, %.2f MB in all\n", rd / 1e6, wr / 1e6,
		(rd + wr) / 1e6);
	print_lookup(out, r);
	fprintf(out, "time bound at %.2f TB/s (%s): %.3f us\n", g->hbm_bytes_per_s / 1e12,
		g->hbm_source, t * 1e6);
	fprintf(out, "tokens/s bound (batch x N = %.0f new tokens a call): %.4g\n", tokens,
		t > 0 ? tokens / t : 0.0);
	print_validation(out, validation(a, p, g), g);
}

static cJSON *
shape_json(const uint64_t v[4])
{
	double d[4] = { (double)v[0], (double)v[1], (double)v[2], (double)v[3] };

	return cJSON_CreateDoubleArray(d, 4);
}

static cJSON *
traffic_json(const char *name, const struct sdpa_traffic *t)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "name", name);
	cJSON_AddNumberToObject(o, "read_bytes", (double)t->read_bytes);
	cJSON_AddNumberToObject(o, "write_bytes", (double)t->write_bytes);
	if (t->lookup_known)
		cJSON_AddNumberToObject(o, "l2_read_lookup_miss_bytes",
					(double)t->read_lookup_miss_bytes);
	return o;
}

static int
write_json(int argc, char **argv, const struct sdpa_args *a, const struct sdpa_plan *p,
	   const struct sdpa_gpu *g, const struct sdpa_result *r)
{
	cJSON *root = cJSON_CreateObject(), *c, *k, *ks, *arr, *dram;
	const struct sdpa_validation *v;
	double rd = (double)(r->main.read_bytes + r->combine.read_bytes);
	double wr = (double)(r->main.write_bytes + r->combine.write_bytes);
	double t = (rd + wr) / g->hbm_bytes_per_s, tokens = (double)p->shape.batch * p->shape.n_q;
	double grid[3] = { p->grid[0], p->grid[1], p->grid[2] };
	char err[512];
	int rc;

	report_add_header(root, argc, argv);
	c = cJSON_AddObjectToObject(root, "config");
	cJSON_AddItemToObject(c, "q", shape_json(a->q));
	cJSON_AddItemToObject(c, "k", shape_json(a->k));
	cJSON_AddItemToObject(c, "v", shape_json(a->k));
	cJSON_AddBoolToObject(c, "causal", a->causal);
	cJSON_AddStringToObject(c, "dtype", a->bf16 ? "bf16" : "fp16");
	cJSON_AddStringToObject(c, "gpu", g->name);
	k = cJSON_AddObjectToObject(root, "kernel");
	cJSON_AddStringToObject(k, "name", kernel_name(p));
	cJSON_AddStringToObject(k, "kind", p->splits > 1 ? "split-kv" : "prefill");
	cJSON_AddNumberToObject(k, "splits", p->splits);
	cJSON_AddNumberToObject(k, "block_m", p->block_m);
	cJSON_AddNumberToObject(k, "block_n", p->block_n);
	cJSON_AddNumberToObject(k, "warps", p->warps);
	cJSON_AddItemToObject(k, "grid", cJSON_CreateDoubleArray(grid, 3));
	cJSON_AddNumberToObject(k, "blocks", (double)sdpa_blocks(p));
	cJSON_AddNumberToObject(k, "blocks_per_sm", p->blocks_per_sm);
	cJSON_AddNumberToObject(k, "slots", r->slots);
	cJSON_AddBoolToObject(k, "seqlenq_ngroups_swapped", p->swapped);
	cJSON_AddBoolToObject(k, "causal", p->causal);
	cJSON_AddNumberToObject(k, "spill_once_bytes", p->spill_cold);
	cJSON_AddNumberToObject(k, "spill_step_bytes", p->spill_hot);
	cJSON_AddNumberToObject(k, "spill_store_bytes", (double)sdpa_spill_store_bytes(p));
	if (p->splits > 1) {
		cJSON_AddNumberToObject(k, "combine_grid", (double)p->combine_grid);
		cJSON_AddNumberToObject(k, "combine_block_m", p->combine_block_m);
	}
	cJSON_AddNumberToObject(root, "l2_bytes", (double)r->l2_bytes);
	cJSON_AddStringToObject(root, "l2_model",
				r->model.backend == SDPA_BACKEND_HASHED       ? "hashed"
				: r->model.backend == SDPA_BACKEND_PARTITIONS ? "partitions"
				: r->model.random_seed                        ? "random"
									      : "lru");
	if (r->model.backend == SDPA_BACKEND_HASHED) {
		cJSON_AddStringToObject(root, "l2_hash", r->model.by_page ? "pages" : "lines");
		cJSON_AddNumberToObject(root, "l2_hash_seed", (double)r->model.page_seed);
	}
	dram = cJSON_AddObjectToObject(root, "dram");
	cJSON_AddNumberToObject(dram, "read_bytes", rd);
	cJSON_AddNumberToObject(dram, "write_bytes", wr);
	cJSON_AddNumberToObject(dram, "bytes", rd + wr);
	if (r->main.lookup_known)
		cJSON_AddNumberToObject(root, "l2_read_lookup_miss_bytes",
					(double)(r->main.read_lookup_miss_bytes +
						 r->combine.read_lookup_miss_bytes));
	if ((v = validation(a, p, g))) {
		cJSON *o = cJSON_AddObjectToObject(root, "validation");

		cJSON_AddStringToObject(o, "kind", v->kind);
		cJSON_AddNumberToObject(o, "measured_shapes", v->shapes);
		cJSON_AddNumberToObject(o, "model_over_ncu_min", v->lo);
		cJSON_AddNumberToObject(o, "model_over_ncu_max", v->hi);
		if (v->note)
			cJSON_AddStringToObject(o, "note", v->note);
		else
			cJSON_AddNullToObject(o, "note");
	} else {
		cJSON_AddNullToObject(root, "validation");
	}
	ks = cJSON_AddArrayToObject(root, "kernels");
	cJSON_AddItemToArray(ks, traffic_json(kernel_name(p), &r->main));
	if (p->splits > 1)
		cJSON_AddItemToArray(ks,
				     traffic_json("flash_fwd_splitkv_combine_kernel", &r->combine));
	arr = cJSON_AddObjectToObject(root, "arrays");
	for (unsigned i = 0; i < SDPA_ARRAYS; i++) {
		cJSON *o = cJSON_AddObjectToObject(arr, sdpa_array_name(i));

		cJSON_AddNumberToObject(o, "read_bytes",
					(double)(r->main.read[i] + r->combine.read[i]));
		cJSON_AddNumberToObject(o, "write_bytes",
					(double)(r->main.write[i] + r->combine.write[i]));
	}
	cJSON_AddNumberToObject(root, "bandwidth_bytes_per_s", g->hbm_bytes_per_s);
	cJSON_AddStringToObject(root, "bandwidth_source", g->source);
	cJSON_AddNumberToObject(root, "time_bound_s", t);
	cJSON_AddNumberToObject(root, "new_tokens", tokens);
	cJSON_AddNumberToObject(root, "tokens_per_s_bound", t > 0 ? tokens / t : 0);
	rc = report_write_json(a->json_path, root, err, sizeof(err));
	cJSON_Delete(root);
	if (rc)
		return print_error("%s", err);
	return EXIT_OK;
}

int
cmd_sdpa(int argc, char **argv)
{
	struct sdpa_args a;
	struct sdpa_shape s;
	struct sdpa_plan p;
	struct sdpa_model m = { 0 };
	struct sdpa_result r;
	const struct sdpa_gpu *g;
	char err[256];
	double steps;
	int rc;

	if ((rc = parse_args(argc, argv, &a)))
		return rc < 0 ? EXIT_OK : rc;
	if ((rc = make_shape(&a, &s)))
		return rc;
	if (!(g = sdpa_gpu_find(a.gpu)))
		return usage_error("sdpa", "--gpu: unknown GPU '%s' (h100, h200)", a.gpu);
	sdpa_plan_make(&s, g, &p);
	if ((steps = sdpa_steps(&p)) > SDPA_STEPS_MAX)
		return usage_error("sdpa",
				   "the shape takes %.3g block steps to simulate (a step: one "
				   "K/V tile of a thread block), over the limit of %.0e: give a "
				   "smaller N, N_kv or batch x heads",
				   steps, SDPA_STEPS_MAX);
	m.l2_bytes = a.l2;
	m.slots = (uint32_t)a.slots;
	m.ways = (uint32_t)a.ways;
	m.random_seed = a.model == 1 ? 1 : 0; /* random */
	m.no_spill = a.no_spill;
	m.backend = a.backend;
	m.line_ways = (uint32_t)a.line_ways;
	m.dirty_ways = (uint32_t)a.dirty_ways;
	m.sample = (uint32_t)a.sample;
	m.policy = a.policy;
	m.partitions = (uint32_t)a.partitions;
	m.by_page = a.hash == 1;
	m.page_seed = a.hash_seed;
	if ((rc = sdpa_simulate(&p, g, &m, &r, err, sizeof(err))))
		return rc == -EINVAL ? usage_error("sdpa", "%s", err) : print_error("%s", err);
	print_text(text_stream(a.json_path), &a, &p, g, &r);
	if (a.json_path)
		return write_json(argc, argv, &a, &p, g, &r);
	return EXIT_OK;
}
