/*
 * Compiled into both builds: declaring a kernel's arrays to the tracing layer, and picking
 * the kernel. Tiles are declared as TRACE_SPACE_TILE: scratch or memory as the preset says.
 */

#include <errno.h>

#include "kernels/tile.h"

static void
declare(struct trace_ctx *t, const char *name, const void *p, uint64_t bytes,
	enum trace_space space)
{
	if (p && bytes)
		TR_ARRAY(t, name, p, bytes, space);
}

void
attn_declare(const struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t s = dtype_bytes(c->dtype), N = c->N, Nk = attn_nkv(c), D = c->d;
	const uint64_t q = c->batch * c->heads * N * D * s,
		       kv = c->batch * c->kv_heads * attn_kv_rows(c) * D * s;
	const uint64_t Dm = c->heads * D, Dkv = c->kv_heads * D;

	(void)declare; /* unused in the native build, where TR_ARRAY vanishes */
	(void)q;
	(void)kv;
	(void)Dm;
	(void)Dkv;
	declare(t, "Q", d->Q, q, TRACE_SPACE_DRAM);
	declare(t, "K", d->K, kv, TRACE_SPACE_DRAM);
	declare(t, "V", d->V, kv, TRACE_SPACE_DRAM);
	declare(t, "O", d->O, q, TRACE_SPACE_DRAM);
	if (c->kernel == ATTN_NAIVE) {
		declare(t, "S", d->S, c->batch * c->heads * N * Nk * s, TRACE_SPACE_DRAM);
		if (d->P != d->S)
			declare(t, "P", d->P, c->batch * c->heads * N * Nk * s, TRACE_SPACE_DRAM);
		declare(t, "row_tile", d->row, Nk * sizeof(float), TRACE_SPACE_TILE);
	}
	if (c->kv_page)
		declare(t, "block_table", d->block_table, c->batch * attn_pages(c) * 4,
			TRACE_SPACE_DRAM);
	if (c->kernel == ATTN_FLASHDECODE) {
		const uint64_t S = attn_splits(c);

		declare(t, "O_accum", d->Oacc, c->batch * c->heads * S * N * D * sizeof(float),
			TRACE_SPACE_DRAM);
		declare(t, "lse_accum", d->lseacc, c->batch * c->heads * S * N * sizeof(float),
			TRACE_SPACE_DRAM);
		declare(t, "lse_tile", d->row, S * sizeof(float), TRACE_SPACE_TILE);
	}
	declare(t, "m", d->m, c->batch * c->heads * N * sizeof(float), TRACE_SPACE_DRAM);
	declare(t, "l", d->l, c->batch * c->heads * N * sizeof(float), TRACE_SPACE_DRAM);
	declare(t, "lse", d->lse, c->batch * c->heads * N * sizeof(float), TRACE_SPACE_DRAM);
	declare(t, "x", d->x, c->batch * N * Dm * s, TRACE_SPACE_DRAM);
	declare(t, "W_Q", d->Wq, Dm * Dm * s, TRACE_SPACE_DRAM);
	declare(t, "W_K", d->Wk, Dm * Dkv * s, TRACE_SPACE_DRAM);
	declare(t, "W_V", d->Wv, Dm * Dkv * s, TRACE_SPACE_DRAM);
	declare(t, "W_O", d->Wo, Dm * Dm * s, TRACE_SPACE_DRAM);
	declare(t, "y", d->y, c->batch * N * Dm * s, TRACE_SPACE_DRAM);
	declare(t, "Q_tile", d->Qt, c->Br * D * sizeof(float), TRACE_SPACE_TILE);
	declare(t, "K_tile", d->Kt, c->Bc * D * sizeof(float), TRACE_SPACE_TILE);
	declare(t, "V_tile", d->Vt, c->Bc * D * sizeof(float), TRACE_SPACE_TILE);
	declare(t, "S_tile", d->St, c->Br * c->Bc * sizeof(float), TRACE_SPACE_TILE);
	declare(t, "O_tile", d->Ot, c->Br * D * sizeof(float), TRACE_SPACE_TILE);
	declare(t, "m_tile", d->mt, c->Br * sizeof(float), TRACE_SPACE_TILE);
	declare(t, "l_tile", d->lt, c->Br * sizeof(float), TRACE_SPACE_TILE);
}

void
attn_dispatch(struct attn_data *d, struct trace_ctx *t)
{
	switch (d->cfg.kernel) {
	case ATTN_NAIVE:
		attn_naive(d, t);
		break;
	case ATTN_FLASH1:
		attn_flash1(d, t);
		break;
	case ATTN_FLASH2:
		attn_flash2(d, t);
		break;
	case ATTN_FLASHDECODE:
		attn_flashdecode(d, t);
		break;
	default:
		attn_proj(d, t);
		break;
	}
}

int
attn_dispatch_phase(struct attn_data *d, struct trace_ctx *t, unsigned phase)
{
	static void (*const phases[ATTN_KERNEL_COUNT][3])(struct attn_data *,
							  struct trace_ctx *) = {
		[ATTN_NAIVE] = { attn_naive_scores, attn_naive_softmax, attn_naive_av },
		[ATTN_FLASH1] = { attn_flash1_init, attn_flash1_tile, NULL },
		/* flash2's one phase is the whole kernel */
		[ATTN_FLASH2] = { attn_flash2, NULL, NULL },
		[ATTN_PROJ] = { attn_proj_qkv, attn_proj_out, NULL },
		[ATTN_FLASHDECODE] = { attn_flashdecode_splits, attn_flashdecode_combine, NULL },
	};

	if ((unsigned)d->cfg.kernel >= ATTN_KERNEL_COUNT || phase >= 3 ||
	    !phases[d->cfg.kernel][phase])
		return -EINVAL;
	phases[d->cfg.kernel][phase](d, t);
	return 0;
}
