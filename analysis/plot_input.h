#pragma once

/*
 * The inputs of `memsim plot`, read from a study directory DIR into plain tables:
 *
 *   DIR/lab/results.json      the bytes-moved lab's sweep (JSON lines, one run each)
 *   DIR/exact/results.json    the exactness sweep (JSON lines)
 *   DIR/profile/results.json  per-operation timings of a layer (JSON lines)
 *   DIR/ceilings.json         measured memory bandwidth and peak FLOP rate (one object)
 *   DIR/decode/results.json   one decode step over a KV cache (JSON lines, one run each)
 *
 * or from a sweep's directory (`memsim sweep --out DIR`): DIR/results.json, whose rows stand
 * for lab's and exact's (those with N_kv = N) and decode's (fewer queries than keys, N <
 * N_kv); lab/, exact/ and decode/ are then not read.
 *
 * A missing file is normal (its producer has not run): its plots are skipped. A file that is
 * there but unusable (not JSON, a key missing) is an error with "path:line: what". A sweep's
 * last line without its newline is a run cut off by an interrupt and is dropped, as
 * `memsim sweep --resume` drops it; rows with an "error" key, or a mode other than
 * "simulated", carry no DRAM bytes and are left out.
 */

#include <stdbool.h>
#include <stddef.h>

enum plot_source {
	PLOT_SOURCE_LAB = 0,
	PLOT_SOURCE_EXACT,
	PLOT_SOURCE_PROFILE,
	PLOT_SOURCE_CEILINGS,
	PLOT_SOURCE_DECODE,
	PLOT_SOURCE_SWEEP, /* DIR/results.json: a sweep's directory */
	PLOT_SOURCES,
};

/* The path of source s relative to DIR: "lab/results.json", ... */
const char *plot_source_path(enum plot_source s);

/* One simulated run of a sweep. Bytes are per run (all heads), as the report has them. */
struct plot_run {
	char kernel[16];
	char dtype[8];
	/* The preset's name, or the cache spec when the run had none; " (sampled 1/K)" after
	 * it for an estimate. */
	char cache[160];
	unsigned sample_sets; /* > 1: an estimate by set sampling */
	unsigned N, d, Br, Bc;
	unsigned dtype_bytes; /* storage bytes of one element: 4, 2 */
	bool causal;
	double dram_bytes;  /* read + written, final flush included */
	double lab_bytes;   /* the lab formula; < 0 where it does not apply */
	double exact_bytes; /* the exact formula; < 0 where absent */
	double flops;
	double intensity;     /* FLOPs per DRAM byte */
	double ll_size_bytes; /* the last cache level's size; 0 without caches */
};

/* One simulated run of the decode sweep: bytes per generated token (DRAM bytes / (batch N))
 * and the tokens/s bound at the row's bandwidth. */
struct plot_decode {
	char dtype[8];
	char cache[160]; /* the preset's name, or the cache spec */
	unsigned N, N_kv, d, heads, kv_heads, batch;
	double bytes_per_token;
	double exact_per_token; /* the exact formula's bytes / (batch N); < 0 where absent */
	double tokens_per_s;    /* < 0 without a bandwidth */
	double gbps;            /* 0 without a bandwidth */
};

/* One row of the layer profile: one operation at one sequence length T. */
struct plot_op {
	unsigned T, d_model, heads, d_head;
	char dtype[8];
	char kernel[16]; /* naive, proj, flash1, flash2 */
	char op[16];     /* qkv_proj, scores, softmax, av, out_proj, attention, layer */
	double p50_seconds;
	double flops;
	double dram_bytes; /* simulated */
	double intensity;  /* FLOPs per simulated DRAM byte */
	double gflops;     /* measured: FLOPs / p50 time, in 10^9 per second */
};

/* The measured machine ceilings. */
struct plot_ceilings {
	char cpu[128];
	char isa[32];
	unsigned cores;
	bool quick;        /* measured with short runs */
	bool inconsistent; /* memsim ceilings found its numbers inconsistent (consistency) */
	double bw_one_bytes_per_s, bw_all_bytes_per_s;
	double flops_one_per_s, flops_all_per_s;
	unsigned bw_threads, flops_threads;
};

struct plot_input {
	char dir[4096];
	bool sweep; /* DIR/results.json is there: lab, exact and decode come from it */
	bool present[PLOT_SOURCES];    /* the file exists */
	bool usable[PLOT_SOURCES];     /* it exists and was read in full */
	char error[PLOT_SOURCES][600]; /* "path:line: what" where present but not usable */
	struct plot_run *lab, *exact;
	size_t nlab, nexact;
	struct plot_op *ops;
	size_t nops;
	struct plot_ceilings ceilings;
	struct plot_decode *decode;
	size_t ndecode;
};

/* Reads every input of dir into in (which the caller owns). Returns 0 when dir can be read,
 * whatever its files hold (see present, usable, error), else a negative errno. Release with
 * plot_input_finish() either way. */
int plot_input_load(struct plot_input *in, const char *dir);

/* Where the rows of source s come from in in: PLOT_SOURCE_SWEEP for lab, exact and decode
 * in a sweep's directory, else s. */
enum plot_source plot_input_source(const struct plot_input *in, enum plot_source s);

/* Frees the tables; plot_input_finish() on a zeroed struct is a no-op. */
void plot_input_finish(struct plot_input *in);

/* Storage bytes of a dtype name ("fp32" 4, "fp16" and "bf16" 2); 0 for an unknown name. */
unsigned plot_dtype_bytes(const char *dtype);
