#pragma once

/*
 * The body of the trace-reader fuzz harnesses (fuzz-din.c, fuzz-dinbin.c, fuzz-lackey.c,
 * fuzz-memsim.c): each passes its input here with the format it fuzzes.
 */

#include <stddef.h>
#include <stdint.h>

#include "traces/reader.h"

/* Writes data to a scratch file, decodes it as format and replays what it decodes through
 * small cache models, aborting on any broken contract. Always returns 0 (libFuzzer's
 * convention for an input that was run). */
int fuzz_reader_run(const uint8_t *data, size_t size, enum trace_format format);
