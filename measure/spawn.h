#pragma once

/*
 * Running another program (Valgrind) and waiting for it: stdout and stderr go to files, so a
 * failure can be reported with the tool's own last words.
 */

#include <stdbool.h>
#include <stddef.h>

/* Finds prog (a bare name) on $PATH, or checks prog itself when it contains a '/'. Writes the
 * path into out and returns true when an executable file is found. */
bool spawn_find(const char *prog, char *out, size_t outlen);

/* Runs argv[0] (a path) with argv, stdout to out_path and stderr to err_path (NULL: discard),
 * and waits. The program dies with this process (Linux: PR_SET_PDEATHSIG), and under
 * spawn_guard_begin() gets the SIGINT or SIGTERM this process gets. Returns the exit status
 * (0-255), or -1 with a one-line message in err when it could not be started, was killed by a
 * signal, or the guard saw one (then it is not started, or waited for until it ends). */
int spawn_wait(char *const argv[], const char *out_path, const char *err_path, char *err,
	       size_t errlen);

/* The last words in a tool's stderr file: its last non-empty line that Valgrind did not
 * prefix with ==pid== (the program's own message), else its last ==pid== line, else "".
 * Writes into buf and returns buf. */
char *spawn_last_line(const char *path, char *buf, size_t len);

/* From spawn_guard_begin() to spawn_guard_end(), SIGINT and SIGTERM do not end this process:
 * the first one is recorded for spawn_guard_signal() and passed on to the program spawn_wait()
 * runs, so that a caller holding temporary files removes them and returns. Not nested. */
void spawn_guard_begin(void);
/* The signal the guard has seen since spawn_guard_begin() (also after spawn_guard_end()), or 0. */
int spawn_guard_signal(void);
/* Gives SIGINT and SIGTERM back their handling before spawn_guard_begin(). */
void spawn_guard_end(void);
