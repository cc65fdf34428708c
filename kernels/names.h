#pragma once

/*
 * The computing kernels' functions. Each kernel source is compiled twice (kernels/meson.build):
 * native (MEMSIM_NATIVE, every TR_* macro vanishes) and traced. The sources call a function by
 * its plain name (attn_flash2); the defines below give it the symbol of the build, each name
 * written out in full so grep and ctags find both. The native symbols are what Cachegrind's
 * per-function counts name (memsim xcheck reads attn_*_native).
 */

struct attn_data;
struct trace_ctx;

#ifdef MEMSIM_NATIVE
#define attn_declare attn_declare_native
#define attn_dispatch attn_dispatch_native
#define attn_dispatch_phase attn_dispatch_phase_native
#define attn_naive attn_naive_native
#define attn_naive_scores attn_naive_scores_native
#define attn_naive_softmax attn_naive_softmax_native
#define attn_naive_av attn_naive_av_native
#define attn_flash1 attn_flash1_native
#define attn_flash1_init attn_flash1_init_native
#define attn_flash1_tile attn_flash1_tile_native
#define attn_flash2 attn_flash2_native
#define attn_proj attn_proj_native
#define attn_proj_qkv attn_proj_qkv_native
#define attn_proj_out attn_proj_out_native
#define attn_flashdecode attn_flashdecode_native
#define attn_flashdecode_splits attn_flashdecode_splits_native
#define attn_flashdecode_combine attn_flashdecode_combine_native
#else
#define attn_declare attn_declare_traced
#define attn_dispatch attn_dispatch_traced
#define attn_dispatch_phase attn_dispatch_phase_traced
#define attn_naive attn_naive_traced
#define attn_naive_scores attn_naive_scores_traced
#define attn_naive_softmax attn_naive_softmax_traced
#define attn_naive_av attn_naive_av_traced
#define attn_flash1 attn_flash1_traced
#define attn_flash1_init attn_flash1_init_traced
#define attn_flash1_tile attn_flash1_tile_traced
#define attn_flash2 attn_flash2_traced
#define attn_proj attn_proj_traced
#define attn_proj_qkv attn_proj_qkv_traced
#define attn_proj_out attn_proj_out_traced
#define attn_flashdecode attn_flashdecode_traced
#define attn_flashdecode_splits attn_flashdecode_splits_traced
#define attn_flashdecode_combine attn_flashdecode_combine_traced
#endif

/* Declares the kernel's memory arrays and tiles to the tracing layer. */
void attn_declare(const struct attn_data *d, struct trace_ctx *t);

/* Runs d's kernel whole (kernels/attn.c's attn_run_native() and attn_run_traced() call it). */
void attn_dispatch(struct attn_data *d, struct trace_ctx *t);

/* Runs phase number `phase` of d's kernel alone (numbered as attn_phase_name() lists them).
 * Returns 0, or -EINVAL for a phase the kernel does not have. */
int attn_dispatch_phase(struct attn_data *d, struct trace_ctx *t, unsigned phase);

/* The whole kernels: declare the arrays, then run every phase in order. */
void attn_naive(struct attn_data *d, struct trace_ctx *t);
void attn_flash1(struct attn_data *d, struct trace_ctx *t);
void attn_flash2(struct attn_data *d, struct trace_ctx *t);
void attn_proj(struct attn_data *d, struct trace_ctx *t);
void attn_flashdecode(struct attn_data *d, struct trace_ctx *t);

/* One phase each, starting with its TR_PHASE (the arrays are declared by the whole kernel), so
 * Cachegrind's per-function counts of the native build (memsim xcheck) include them. */
void attn_naive_scores(struct attn_data *d, struct trace_ctx *t);
void attn_naive_softmax(struct attn_data *d, struct trace_ctx *t);
void attn_naive_av(struct attn_data *d, struct trace_ctx *t);
void attn_flash1_init(struct attn_data *d, struct trace_ctx *t);
void attn_flash1_tile(struct attn_data *d, struct trace_ctx *t);
void attn_proj_qkv(struct attn_data *d, struct trace_ctx *t);
void attn_proj_out(struct attn_data *d, struct trace_ctx *t);
void attn_flashdecode_splits(struct attn_data *d, struct trace_ctx *t);
void attn_flashdecode_combine(struct attn_data *d, struct trace_ctx *t);
