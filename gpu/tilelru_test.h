#pragma once

/* The tile LRU's occupancy, for tests only (tests/test-sdpa.c). */

#include <stdint.h>

#include "gpu/tilelru.h"

/* Bytes held now. */
uint64_t tilelru_held_bytes(const struct tilelru *t);
