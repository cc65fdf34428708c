#pragma once

/*
 * Closed-form DRAM bytes of the attention kernels.
 *
 * The lab formulas, exactly as lab 01 (The Bytes-Moved Delta) states them (fp32 units scaled
 * by s/4): naive (12 N d + 16 N^2) s/4 per head (leaves out the O write), flash
 * 8 N d (1 + N / B_r) s/4 per head (FlashAttention-2 loop order: Q read, O written, K and V
 * read once per query block). With N_kv keys (decode, chunked prefill) they read
 * (4 N d + 8 N_kv d + 16 N N_kv) s/4 and 8 d (N + N_kv N / B_r) s/4, the lab's at N_kv = N.
 *
 * The exact formulas, derived from the kernels as written (kernels/) for a machine whose
 * level above DRAM is a least-recently-used cache of C bytes in lines of L bytes: every line
 * of every array follows a sequence of accesses (load, partial store, whole-line store), each
 * a reuse distance after the previous one (the number of other lines touched in between,
 * written out per kernel in analysis/formulas.c and docs/formulas.md). A fully associative
 * LRU cache hits exactly when that distance is below C / L; a write-back cache writes a dirty
 * line once per eviction or at the final flush; write-allocate fetches a line on a partial
 * store miss (read for ownership), write-validate does not. With no cache, every access moves
 * its own bytes.
 */

#include <stdbool.h>
#include <stdint.h>

#include "kernels/attn.h"
#include "sim/spec.h"

#define FORMULA_MAX_ARRAYS 24

/* What the formulas need to know of the machine. */
struct formula_machine {
	bool no_cache;         /* every access moves its own bytes (the lab preset) */
	double capacity_bytes; /* C: the level above DRAM (the last level) */
	double line_bytes;     /* L */
	bool rfo;              /* write-allocate with fetch: partial store misses read the line */
	bool tiles_in_scratch;
	bool flush; /* dirty lines written back at the end */
	/* The last level's organization: the exact formulas assume a fully associative LRU cache;
	 * the regimes and the set-associative interval need to know how far this one is. */
	unsigned levels;
	bool fully_assoc;
	uint32_t ways;
	uint64_t sets;
	enum cache_repl repl;
	bool inclusive; /* some level is inclusive of the levels above (back-invalidation) */
	/* What the exact formulas do not model: they bound their scope (formula_scope()). */
	bool write_through;          /* some level writes every store through */
	bool no_write_allocate;      /* some level passes write misses down without allocating */
	bool cachegrind_quirks;      /* straddle_once or quiet_writebacks on some level */
	double upper_capacity_bytes; /* the largest level above the last (0 with one level) */
};

/* What the exact formula claims for a machine (docs/formulas.md, "Scope"). */
enum formula_scope {
	FORMULA_SCOPE_EXACT = 0, /* byte-equal on every array: a single fully associative LRU
				    write-back level (or no cache) of at least the smallest size */
	FORMULA_SCOPE_INTERVAL,  /* a set-associative LRU level of 8 ways or more: every
				    array and the total lie in low_bytes .. high_bytes, no
				    tolerance (the bound of formula_interval_runs()) */
	FORMULA_SCOPE_ESTIMATE,  /* outside the formula's model: a reference, nothing claimed */
};

struct formula_array {
	char name[32];
	double read_bytes;  /* including rfo_bytes */
	double write_bytes; /* including flush_bytes */
	double rfo_bytes;
	double flush_bytes;
	double low_bytes, high_bytes; /* the set-associative interval (read + write); see below */
};

/* Why a lab formula's assumption holds or fails, per kernel. */
struct formula_regime {
	bool within_assumptions;
	char text[384]; /* the regime in words, or the failed assumption (why_not) */
};

struct formula_result {
	struct formula_array arrays[FORMULA_MAX_ARRAYS];
	unsigned narrays;
	double read_bytes, write_bytes, rfo_bytes, flush_bytes;
	double lab_bytes;                /* 0 for kernels without a lab formula (flash1, proj) */
	double lab_basis_bytes_excluded; /* bytes the lab formula leaves out (naive: O's write) */
	struct formula_regime regime;
	double flops;
	bool tiles_approximate; /* tiles in memory that spill from the cache: not modeled */
	/* Scope interval only: a set-associative last level of S sets of W ways, where each
	 * window between two touches of a line is at most R runs of consecutive lines, holds
	 * each line the fully associative cache of C - R S L holds, and no line the one of
	 * C + R S L loses; so the formula there brackets the run: low_bytes .. high_bytes (in
	 * total and per array; else both are the formula's bytes). R: interval_runs. */
	bool interval;
	double low_bytes, high_bytes;
	unsigned interval_runs;
	/* Of the formula at the bound's ends, or with no bound at C - S L and C + S L, on a
	 * set-associative last level: the lab's assumptions must hold at both to be called
	 * inside. */
	unsigned interval_sides_in_regime;
	double step_lines; /* at most the lines one step of the kernel touches (tiles in memory
			      included): a smaller cache is outside the exact scope */
	enum formula_scope scope;
	/* The lab's assumptions are judged on the exact formula's arrays: only where its scope
	 * is exact or interval, or where levels above the last, all small (1/8 of it at most),
	 * are all that put it out of scope. */
	bool regime_judged;
	char scope_why[256]; /* for FORMULA_SCOPE_ESTIMATE: the first thing the model lacks */
};

/* The machine a spec describes: its last level (or no cache), RFO from L1's write-miss
 * policy, tile placement. */
void formula_machine_from_spec(const struct spec *s, bool flush, struct formula_machine *m);

/* Evaluates the lab and exact formulas. Returns 0, or -EINVAL for a config the formulas do not
 * cover (never for a config attn_config_check() accepts). */
int formula_eval(const struct attn_config *c, const struct formula_machine *m,
		 struct formula_result *out);

/* The lab formula alone, in bytes (all heads and batches); 0 when the kernel has none. */
double formula_lab(const struct attn_config *c);

/* "exact", "interval" or "estimate". */
const char *formula_scope_name(enum formula_scope scope);

/* R, the runs of consecutive lines that can lie between two touches of a line in kernel
 * c's trace (docs/formulas.md, "Set-associative caches: the bound"); 0 for the kernels it is
 * not derived for. */
unsigned formula_interval_runs(const struct attn_config *c);

/* Sets r->scope and r->scope_why for a result formula_eval() computed, and on a
 * set-associative level in scope the bound (r->interval, low_bytes, high_bytes); formula_scope.c.
 */
void formula_scope(struct formula_result *r, const struct attn_config *c,
		   const struct formula_machine *m);

/* The array named name, or NULL. */
const struct formula_array *formula_array(const struct formula_result *r, const char *name);
