#pragma once

/*
 * The attention kernels and their data.
 *
 * Layout [batch][heads][N][d], row-major, in the storage dtype; K and V are
 * [batch][kv_heads][N_kv][d] (grouped-query attention: query head h reads kv head
 * h / (heads / kv_heads); N_kv keys and values, N queries: decode and chunked prefill have
 * N < N_kv). The causal mask is aligned at the end, as FlashAttention's: query row i sees keys
 * j <= i + N_kv - N (so N <= N_kv when causal). Compute is
 * fp32. Every kernel is one source compiled twice: attn_run_native() (every TR_* macro gone)
 * and attn_run_traced() (every access reported to a struct trace_ctx).
 *
 *  naive   three passes, like the three kernels a framework launches: S = Q K^T / sqrt(d)
 *          (blocked: B_r query rows x B_c key rows through tiles), P = softmax(S) row by row
 *          (causal mask applied here; S is materialized in full), O = P V (blocked).
 *          P overwrites S unless softmax_separate is set.
 *  flash1  FlashAttention-1 loop order: outer over K/V blocks, inner over Q blocks; O, l and m
 *          live in memory and are read and written back at every outer step.
 *  flash2  FlashAttention-2 loop order: outer over Q blocks, K/V blocks streamed, O and the
 *          logsumexp written once; causal skips fully masked blocks.
 *  flashdecode  FlashAttention-2's split-KV decoding (flash_fwd_splitkv_kernel and
 *          flash_fwd_splitkv_combine_kernel): for each (batch, head) the key blocks are cut into
 *          S contiguous splits of ceil(T_c / S) blocks; phase "splits" runs flash2's loop over
 *          each split's keys for every query block and stores a partial O (fp32,
 *          [batch][heads][S][N][d]) and logsumexp ([batch][heads][S][N]); phase "combine"
 *          reduces them per query row into O and lse. At S = 1 the split writes O and lse
 *          directly (no partial arrays, no combine), as FlashAttention does.
 *          With N = 1 and grouped heads it packs a KV head's query heads as one head's
 *          query rows, as FlashAttention does (attn_decode_view()).
 *  proj    the input projections Q, K, V = x W_Q, x W_K, x W_V (x is [batch][N][heads * d])
 *          and the output projection y = concat(O) W_O of a whole attention layer.
 *
 * Paged KV cache (kv_page = P > 0; flash2 and flashdecode): K and V are pools of pages
 * [pages][P][kv_heads][d] (FlashAttention's k_cache (num_blocks, page_block_size, nheads_k,
 * headdim), vLLM's layout), batch x ceil(N_kv / P) pages each, the last page of a sequence
 * partly used; an int32 block table [batch][ceil(N_kv / P)] maps a sequence's logical page to
 * its physical page. The table is a permutation of the pool drawn from kv_seed (a fragmented
 * allocator's worst case). The kernel reads the entries a key block needs as it loads the
 * block (array "block_table"), then K and V rows through them: the same arithmetic in the
 * same order as unpaged, so the same outputs bit for bit.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/dtype.h"
#include "sim/trace.h"

enum attn_kernel {
	ATTN_NAIVE = 0,
	ATTN_FLASH1,
	ATTN_FLASH2,
	ATTN_PROJ,
	ATTN_FLASHDECODE,
	ATTN_KERNEL_COUNT,
};

/* Where flashdecode's S came from. */
enum attn_splits_source {
	ATTN_SPLITS_GIVEN = 0, /* --splits, or not flashdecode */
	ATTN_SPLITS_HEURISTIC, /* FlashAttention's num_splits_heuristic for a GPU preset */
	ATTN_SPLITS_CPU,       /* 1 on a CPU preset, lab or an explicit spec */
};

struct attn_config {
	enum attn_kernel kernel;
	uint64_t N; /* query rows */
	uint64_t d; /* head dimension */
	uint64_t heads;
	uint64_t kv_heads; /* divides heads */
	uint64_t batch;
	enum attn_dtype dtype;
	uint64_t Br, Bc; /* tile rows: query block, key/value block */
	bool causal;
	bool softmax_separate; /* naive: P in its own array instead of over S */
	uint64_t N_kv;         /* key and value rows; 0 means N */
	uint64_t splits;       /* flashdecode: S, 0 means 1; see attn_splits() */
	enum attn_splits_source splits_source;
	uint64_t kv_page; /* paged KV cache: P tokens a page; 0 = unpaged */
	uint64_t kv_seed; /* the block table's permutation (with kv_page) */
};

/* Arrays of a run. Pointers not used by the kernel are NULL. */
struct attn_data {
	struct attn_config cfg;
	/* memory arrays, storage dtype unless noted */
	void *Q, *K, *V, *O;
	void *S, *P;  /* naive: [batch][heads][N][N_kv]; P == S unless softmax_separate */
	float *m, *l; /* flash1: running max and sum per query row, fp32 */
	float *lse;   /* flash2, flashdecode: logsumexp per query row, fp32 */
	float *Oacc;  /* flashdecode, S > 1: partial O [batch][heads][S][N][d], fp32 */
	float *lseacc; /* flashdecode, S > 1: partial logsumexp [batch][heads][S][N], fp32 */
	int32_t *block_table; /* paged: [batch][attn_pages()] in the arena (no values if
			       * trace-only) */
	int32_t *pages;       /* paged: the same table on the heap, readable in every run */
	void *x, *Wq, *Wk, *Wv, *Wo, *y; /* proj: x [batch][N][D], W [D][D or Dkv], y like x */
	/* tiles, fp32 */
	float *Qt, *Kt, *Vt, *St, *Ot, *row, *mt, *lt; /* row: flashdecode's S lse values */
	/* every array above lives in one mapping (see attn_data_create()) */
	void *arena;
	size_t arena_bytes;
	/* from attn_data_create_trace_only(): addresses without memory, nothing to read or
	 * write; the traced build runs the kernels' trace-only forms (kernels/trace_only.h) */
	bool trace_only;
};

/* Validates a config; returns 0, or -EINVAL with a one-line message naming the bad option
 * (a zero size, kv_heads not dividing heads, N_kv != N for flash1 or proj, N > N_kv with the
 * causal mask, buffers that would not fit in memory). */
int attn_config_check(const struct attn_config *c, char *err, size_t errlen);
/* As attn_config_check() for a trace-only run (attn_data_create_trace_only()), whose arrays
 * take address space, not memory: only arrays past 2^64 bytes are refused (-ENOMEM). */
int attn_config_check_trace_only(const struct attn_config *c, char *err, size_t errlen);

/* Bytes of the memory arrays (not tiles) a run allocates. */
uint64_t attn_array_bytes(const struct attn_config *c);
/* Bytes of everything attn_data_create() maps: arrays and tiles, each rounded up to pages;
 * UINT64_MAX past 2^64. */
uint64_t attn_data_bytes(const struct attn_config *c);

/* Allocates the arrays and tiles of a run in one arena whose base is aligned to 2^30, each at
 * a page boundary in a fixed order: the same configuration gets the same addresses modulo
 * 2^30 in every process, so simulated counters never depend on where the heap was. NULL with
 * a message if memory is short. Free with attn_data_destroy(). */
struct attn_data *attn_data_create(const struct attn_config *c, char *err, size_t errlen);
/* The same arena as address space only (mapped PROT_NONE: it commits no memory, and any read
 * or write of it faults), for attn_run_traced()'s trace-only run: the same addresses modulo
 * 2^30, so the same counters, for arrays of any size the address space holds. NULL with a
 * message if it does not. Free with attn_data_destroy(). */
struct attn_data *attn_data_create_trace_only(const struct attn_config *c, char *err,
					      size_t errlen);
void attn_data_destroy(struct attn_data *d);
/* Tiles of d's sizes for v, a view of d's arrays that another thread runs natively
 * (run/attn_split.h): v's tile pointers (those d has; the others NULL) point into one
 * block, returned for free(); NULL when memory is short. */
void *attn_tiles_alloc(const struct attn_data *d, struct attn_data *v);

/* Fills the inputs with values uniform in [-1, 1) from seed (stored rounded to the dtype).
 * Nothing for trace-only data, which holds no values. */
void attn_data_fill(struct attn_data *d, uint64_t seed);
/* Sets every output element to NaN, so an element a kernel fails to write is caught. Nothing
 * for trace-only data. */
void attn_data_poison(struct attn_data *d);

/* Writes then reads a fresh buffer of `bytes`, so that a cache of at most half that holds
 * none of the run's arrays: the native kernel then starts cold, as a simulated run does (the
 * fill just wrote the inputs). A function of its own, so per-function counts (Cachegrind)
 * leave it out. Returns 0 or -ENOMEM. */
int attn_evict_caches(uint64_t bytes);

/* Runs the kernel of d->cfg. The traced build declares its arrays and phases to t; for
 * trace-only data it runs the kernel's trace-only form, which makes the same reports (the same
 * counters) and computes nothing. The native build needs data with values. */
void attn_run_native(struct attn_data *d);
void attn_run_traced(struct attn_data *d, struct trace_ctx *t);

/* Phase i of kernel k in the order the kernel runs them (the names its traced build gives
 * TR_PHASE): naive "scores", "softmax", "av"; flash1 "init", "flash_tile"; flash2
 * "flash_tile"; proj "qkv_proj", "out_proj"; flashdecode "splits", "combine" (at S = 1 the
 * combine does nothing). NULL past the last phase. */
const char *attn_phase_name(enum attn_kernel k, unsigned i);

/* Runs one phase of d's kernel natively, alone: what the whole kernel does in that phase, on
 * whatever the arrays hold (run the phases in order, or the whole kernel once, for the
 * outputs to mean anything). d must hold values. Returns 0, or -EINVAL for a phase the kernel
 * does not have. */
int attn_run_native_phase(struct attn_data *d, const char *phase);

/* Phase i of d's kernel alone through the traced build (its arrays declared to t first):
 * one GPU kernel launch's worth, for memsim gpucheck; trace-only data as attn_run_traced().
 * Returns 0 or -EINVAL. */
int attn_run_traced_phase(struct attn_data *d, struct trace_ctx *t, unsigned i);

struct attn_error {
	double max_abs;     /* max |out - ref| over every output element */
	double max_ref;     /* max |ref| */
	double bound;       /* the max_abs allowed (see attn_check) */
	uint64_t nonfinite; /* output elements that are NaN or infinite (never written) */
	uint64_t lse_bad;   /* flash2, flashdecode: logsumexp values off by > 1e-5 relative */
	uint64_t checked;
	bool pass;
};

/* Compares the outputs with a double-precision reference computed from the same (rounded)
 * inputs: O (and flash2's logsumexp, to 1e-5 relative) for the attention kernels, Q, K, V
 * and y for proj. The
 * bound is 1e-5 for fp32; for fp16 and bf16 (unit roundoff u = 2^-11, 2^-8) it adds what the
 * kernel's stores in that type can cost: u |O| for one final store, u vmax (2 smax + 2) for
 * naive's stored S and P, u vmax (T_c + 1) for flash1's O stored at every step. d must hold
 * values (not trace-only). */
struct attn_error attn_check(const struct attn_data *d);

/* FLOPs of the kernel: 4 d per score for QK^T and PV plus 5 per score for the softmax (max,
 * subtract, exp, sum, scale), N N_kv scores per head (N (N + 1) / 2 + N (N_kv - N) when
 * causal); flashdecode adds its combine's 2 d + 6 per query row and split when S > 1; proj:
 * 2 N D (3 D_in + D) x batch. */
double attn_flops(const struct attn_config *c);

/* FLOPs of one phase of c's kernel, per the same counts as attn_flops(), over batch and
 * heads: qkv_proj 2 N D (D + 2 D_kv), out_proj 2 N D^2; scores and av 2 d per score each,
 * softmax 5 per score (scores as attn_flops() counts them); flash_tile the whole
 * attn_flops(), flash1's init 0; flashdecode's splits the scores' and combine the rest. The phases
 * of a kernel sum to attn_flops(). NAN for a phase the kernel does not have. */
double attn_phase_flops(const struct attn_config *c, const char *phase);

const char *attn_kernel_name(enum attn_kernel k);
const char *attn_dtype_name(enum attn_dtype t);
/* Where flashdecode's S came from: "given", "heuristic" or "cpu". */
const char *attn_splits_source_name(enum attn_splits_source s);
/* Parse names; return false for unknown ones. */
bool attn_kernel_parse(const char *s, enum attn_kernel *out);
bool attn_dtype_parse(const char *s, enum attn_dtype *out);

/* Key and value rows of c: N_kv, or N where N_kv is 0. */
static inline uint64_t
attn_nkv(const struct attn_config *c)
{
	return c->N_kv ? c->N_kv : c->N;
}

/* Keys before the first query's position under the end-aligned causal mask: N_kv - N (query
 * row i sees keys j <= i + attn_kv_offset()). */
static inline uint64_t
attn_kv_offset(const struct attn_config *c)
{
	return attn_nkv(c) - c->N;
}

/* Number of tiles of n rows in blocks of b: ceil(n / b). */
static inline uint64_t
attn_blocks(uint64_t n, uint64_t b)
{
	return (n + b - 1) / b;
}

/* Pages of one sequence's keys (ceil(N_kv / P)); 0 unpaged. */
static inline uint64_t
attn_pages(const struct attn_config *c)
{
	return c->kv_page ? attn_blocks(attn_nkv(c), c->kv_page) : 0;
}

/* Key and value rows a (batch, kv head) slice of K or V spans: N_kv, or the pool's
 * pages x P tokens when paged (every head of a page is in it). */
static inline uint64_t
attn_kv_rows(const struct attn_config *c)
{
	return c->kv_page ? attn_pages(c) * c->kv_page : attn_nkv(c);
}

/* The paged run's block table (c->kv_page): pages[b * attn_pages(c) + p] is batch b's page p's
 * physical page, a permutation of the pool drawn from c->kv_seed (the run's own table; the
 * exact formula walks the same). */
void attn_block_table_shuffle(const struct attn_config *c, int32_t *pages);

/* Element index in K (or V) of key row j of batch b, kv head kvh: [batch][kv_heads][N_kv][d],
 * or paged row j % P of physical page pages[b][j / P] in [pages][P][kv_heads][d]. */
static inline uint64_t
attn_kv_row(const struct attn_config *c, const int32_t *pages, uint64_t b, uint64_t kvh, uint64_t j)
{
	uint64_t P = c->kv_page;

	if (!P)
		return ((b * c->kv_heads + kvh) * attn_nkv(c) + j) * c->d;
	return (((uint64_t)pages[b * attn_pages(c) + j / P] * P + j % P) * c->kv_heads + kvh) *
	       c->d;
}

/* flashdecode's S: c->splits (0 meaning 1), at most the T_c key blocks, so that every split
 * has a block to start from. */
static inline uint64_t
attn_splits(const struct attn_config *c)
{
	uint64_t s = c->splits ? c->splits : 1, tc = attn_blocks(attn_nkv(c), c->Bc);

	return s < tc ? s : tc;
}

/* flashdecode's query packing, FlashAttention's seqlenq_ngroups_swapped (flash_api.cpp,
 * mha_fwd): one query row (N = 1) and grouped heads (heads > kv_heads). The g = heads /
 * kv_heads query heads of a KV head then run as g query rows of one head, in query blocks of
 * B_r rows, so each K and V block is read once per group instead of once per query head. */
static inline bool
attn_decode_packed(const struct attn_config *c)
{
	return c->kernel == ATTN_FLASHDECODE && c->N == 1 && c->kv_heads && c->heads > c->kv_heads;
}

/* The config flashdecode's loops run: c itself, or packed, heads = kv_heads and N = g query
 * rows (Q, O and lse of [batch][heads][1] are [batch][kv_heads][g]: the same bytes; the
 * partial arrays [batch][kv_heads][S][g]), without the causal mask (one query sees every key;
 * FlashAttention drops is_causal where seqlen_q = 1). */
static inline struct attn_config
attn_decode_view(const struct attn_config *c)
{
	struct attn_config v = *c;

	if (attn_decode_packed(c)) {
		v.N_kv = attn_nkv(c);
		v.N = c->heads / c->kv_heads;
		v.heads = c->kv_heads;
		v.causal = false;
	}
	return v;
}

/* The position shift of flashdecode's query rows in c = attn_decode_view(): N_kv - N under
 * the causal mask; else N_kv, past every key, so that no mask hides one (a packed view drops
 * the mask its source config may still carry). */
static inline uint64_t
attn_decode_shift(const struct attn_config *c)
{
	return c->causal ? attn_kv_offset(c) : attn_nkv(c);
}

/* Key blocks per split: ceil(T_c / S), FlashAttention's n_blocks_per_split. Split s covers
 * blocks [s per, min(T_c, (s + 1) per)); a last split may be left empty (T_c = 5, S = 4: 2,
 * 2, 1, 0), as in FlashAttention, where it writes 0 and -inf. */
static inline uint64_t
attn_split_blocks(const struct attn_config *c)
{
	return attn_blocks(attn_blocks(attn_nkv(c), c->Bc), attn_splits(c));
}
