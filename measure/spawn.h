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
 * and waits. Returns the exit status (0-255), or -1 with a one-line message in err when it
 * could not be started or was killed by a signal. */
int spawn_wait(char *const argv[], const char *out_path, const char *err_path, char *err,
	       size_t errlen);

/* The last words in a tool's stderr file: its last non-empty line that Valgrind did not
 * prefix with ==pid== (the program's own message), else its last ==pid== line, else "".
 * Writes into buf and returns buf. */
char *spawn_last_line(const char *path, char *buf, size_t len);
