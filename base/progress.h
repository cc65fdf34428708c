#pragma once

/*
 * One updating line on stderr while long work runs: what runs, units done of total, their
 * rate and the time left, e.g.
 *   memsim: flash2: 41.2%, 13500/32768 query blocks, 52/s, about 6m10s left
 * Off until the command enables it (stderr a terminal and no --quiet, cli/main.c). It writes
 * to stderr alone and reads no counter, so no result changes with it.
 *
 * The state is one per process, not per model: the terminal it draws on is one per process.
 * Callers report at most every few thousand accesses or once a block or read; a report
 * checks the clock, and the line is drawn first after PROGRESS_DELAY_S (short work shows
 * nothing) and redrawn at most 10 times a second.
 */

#include <stdbool.h>
#include <stdint.h>

#define PROGRESS_DELAY_S 0.5

/* Turns the line on or off for what starts next (progress_begin()). */
void progress_enable(bool on);
bool progress_enabled(void);

/* Starts a task named what (copied; "flash2", "replay"). Within a task, one begun and ended
 * inside it (a traced run inside a profile) shows nothing: the outer one's line stays. */
void progress_begin(const char *what);
/* Where the task stands: fraction of the whole done (0 to 1; negative when unknown, as when
 * reading a pipe), and done of total of unit (total 0: no total known; unit a static string,
 * "query blocks", "MiB"); the rate counts units since unit or total last changed. */
void progress_report(double fraction, double done, double total, const char *unit);
/* The last report again, the line redrawn with the time so far: for a caller waiting on
 * work it cannot see into (a child process), every tenth of a second. */
void progress_tick(void);
/* Ends the task begun last; the outermost's end erases the line, if one was drawn. */
void progress_end(void);
