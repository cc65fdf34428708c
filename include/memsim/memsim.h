#ifndef MEMSIM_MEMSIM_H
#define MEMSIM_MEMSIM_H

/*
 * memsim's public interface, for programs and kernels outside memsim's tree: include this
 * one header, link with `pkg-config --cflags --libs memsim`.
 *
 *   memsim/hierarchy.h  a cache hierarchy from a spec or preset (the grammar of --cache),
 *                       its counters per level, array and phase, and the report as JSON
 *   memsim/trace.h      what a kernel reports: arrays, phases, loads and stores (TR_*)
 *   memsim/plugin.h     a kernel as a plugin that every memsim command runs
 *
 * Compiles as C11 and C++17. Every exported name starts with memsim_, MEMSIM_ or TR_.
 * docs/library.md is the guide; its "ABI" section says what a version number promises.
 */

/* The library's version: MAJOR changes break programs built against an older one. */
#define MEMSIM_VERSION_MAJOR 0
#define MEMSIM_VERSION_MINOR 3
#define MEMSIM_VERSION_PATCH 0

#include "memsim/hierarchy.h"
#include "memsim/plugin.h"
#include "memsim/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library a program runs with ("0.3.0"), which may be newer than the
 * headers it was built with. */
const char *memsim_version(void);

#ifdef __cplusplus
}
#endif

#endif
