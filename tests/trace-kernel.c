/*
 * A small kernel written against sim/trace.h and compiled twice, like the real kernels: with
 * MEMSIM_NATIVE (every TR_* macro vanishes) and without (every access is traced).
 */

#include "tests/trace-kernel.h"

#include <stddef.h>

#include "sim/trace.h"

/* The symbol of each build, written out (tests/trace-kernel.h declares both). */
#ifdef MEMSIM_NATIVE
#define tk_matmul tk_matmul_native
#else
#define tk_matmul tk_matmul_traced
#endif

/* C = A B for n x n floats, i-k-j order; a scratch "tile" accumulates each row of C. */
void
tk_matmul(struct trace_ctx *t, const float *a, const float *b, float *c, float *tile, size_t n)
{
	TR_ARRAY(t, "A", a, n * n * sizeof(*a), TRACE_SPACE_DRAM);
	TR_ARRAY(t, "B", b, n * n * sizeof(*b), TRACE_SPACE_DRAM);
	TR_ARRAY(t, "C", c, n * n * sizeof(*c), TRACE_SPACE_DRAM);
	TR_ARRAY(t, "tile", tile, n * sizeof(*tile), TRACE_SPACE_TILE);
	TR_PHASE(t, "matmul");
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n; j++) {
			tile[j] = 0;
			TR_STORE_ELEM(t, &tile[j]);
		}
		for (size_t k = 0; k < n; k++) {
			float aik = a[i * n + k];

			TR_LOAD_ELEM(t, &a[i * n + k]);
			for (size_t j = 0; j < n; j++) {
				TR_LOAD_ELEM(t, &b[k * n + j]);
				TR_LOAD_ELEM(t, &tile[j]);
				tile[j] += aik * b[k * n + j];
				TR_STORE_ELEM(t, &tile[j]);
			}
		}
		TR_PHASE(t, "writeout");
		TR_LOAD_SPAN(t, tile, n * sizeof(*tile));
		for (size_t j = 0; j < n; j++)
			c[i * n + j] = tile[j];
		TR_STORE_SPAN(t, &c[i * n], n * sizeof(*c));
		TR_PHASE(t, "matmul");
	}
}
