#pragma once

/*
 * The report's decode section (analysis/labreport.c calls it): from DIR/decode/results.json,
 * how the DRAM bytes per generated token of one decode step grow with the KV cache's length
 * N_kv, how much grouped-query and multi-query attention save against multi-head attention at
 * the largest N_kv, and the tokens/s bound there; the plots of DIR (dir) where drawn. Every
 * number goes through l; summary gets the section's key numbers. A missing decode sweep is said in
 * one paragraph.
 */

#include <cJSON.h>

#include "analysis/doc.h"
#include "analysis/lookup.h"

void report_decode_section(const char *dir, struct lookup *l, struct doc *d, cJSON *summary);
