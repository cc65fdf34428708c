#pragma once

/* Processes in a test (Linux /proc): whether one runs, a child of one, short sleeps. */

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

/* The text of /proc/<pid>/stat ("pid (comm) state ppid ...") from its last ')' on, into buf;
 * false when there is no such process. (slurp() sizes a file by seeking: /proc's are 0.) */
static inline bool
proc_stat(const char *pid, char *buf, size_t len)
{
	char path[300], text[1024], *paren;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	paren = strrchr(text, ')');
	if (!paren)
		return false;
	snprintf(buf, len, "%s", paren);
	return true;
}

/* Whether process pid runs (a zombie waiting for a parent that never reaps does not). */
static inline bool
proc_running(pid_t pid)
{
	char id[32], st[1024];

	snprintf(id, sizeof(id), "%ld", (long)pid);
	return proc_stat(id, st, sizeof(st)) && st[1] == ' ' && st[2] != 'Z' && st[2] != 'X';
}

/* A running child of process parent, or 0. */
static inline pid_t
proc_child_of(pid_t parent)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	while (d && !found && (e = readdir(d))) {
		char st[1024];
		long ppid;

		/* ") state ppid ..." */
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9' &&
		    proc_stat(e->d_name, st, sizeof(st)) && sscanf(st + 2, "%*c %ld", &ppid) == 1 &&
		    ppid == (long)parent && st[2] != 'Z')
			found = (pid_t)strtol(e->d_name, NULL, 10);
	}
	if (d)
		closedir(d);
	return found;
}

static inline void
sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&t, NULL);
}

/* A running child of process parent whose name (/proc/<pid>/comm) is comm, or 0. */
static inline pid_t
proc_child_named(pid_t parent, const char *comm)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	while (d && !found && (e = readdir(d))) {
		char st[1024], path[300], name[64] = "";
		long ppid;
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || !proc_stat(e->d_name, st, sizeof(st)) ||
		    sscanf(st + 2, "%*c %ld", &ppid) != 1 || ppid != (long)parent || st[2] == 'Z')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (f && fgets(name, sizeof(name), f))
			name[strcspn(name, "\n")] = '\0';
		if (f)
			fclose(f);
		if (strcmp(name, comm) == 0)
			found = (pid_t)strtol(e->d_name, NULL, 10);
	}
	if (d)
		closedir(d);
	return found;
}
