#include "measure/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "base/progress.h"

static volatile sig_atomic_t guard_signal; /* the first SIGINT or SIGTERM seen, or 0 */
static volatile sig_atomic_t guard_child;  /* the pid spawn_wait() waits for, or 0 */
static struct sigaction guard_old_int, guard_old_term;
static bool guard_on;

static void
on_guard_signal(int sig)
{
	if (!guard_signal)
		guard_signal = sig;
	if (guard_child > 0)
		kill((pid_t)guard_child, sig);
}

void
spawn_guard_begin(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a wait or a read returns EINTR, and the caller looks at the flag. */
	sa.sa_handler = on_guard_signal;
	guard_signal = 0;
	guard_child = 0;
	sigaction(SIGINT, &sa, &guard_old_int);
	sigaction(SIGTERM, &sa, &guard_old_term);
	guard_on = true;
}

int
spawn_guard_signal(void)
{
	return guard_signal;
}

void
spawn_guard_end(void)
{
	if (!guard_on)
		return;
	sigaction(SIGINT, &guard_old_int, NULL);
	sigaction(SIGTERM, &guard_old_term, NULL);
	guard_on = false;
}

bool
spawn_find(const char *prog, char *out, size_t outlen)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/')) {
		snprintf(out, outlen, "%s", prog);
		return access(prog, X_OK) == 0;
	}
	if (!path || !*path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(out, outlen, "%.*s/%s", (int)n, n ? path : ".", prog);
		if (access(out, X_OK) == 0)
			return true;
		path += n;
		if (*path == ':')
			path++;
	}
	return false;
}

/* In the child: fd becomes path (or /dev/null). */
static void
redirect(int fd, const char *path)
{
	int f = open(path ? path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (f < 0)
		_exit(126);
	if (dup2(f, fd) < 0)
		_exit(126);
	close(f);
}

/* waitpid() for pid; while a progress line shows, polled every tenth of a second to keep the
 * line's time going (a signal still cuts the sleep short: -1 with EINTR as before). */
static pid_t
wait_child(pid_t pid, int *status)
{
	const struct timespec tenth = { 0, 100000000 };

	if (!progress_enabled())
		return waitpid(pid, status, 0);
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);

		if (w != 0)
			return w;
		if (nanosleep(&tenth, NULL) < 0) {
			errno = EINTR;
			return -1;
		}
		progress_tick();
	}
}

int
spawn_wait(char *const argv[], const char *out_path, const char *err_path, char *err, size_t errlen)
{
	pid_t parent = getpid(), pid;
	int status;

	if (guard_on && guard_signal) {
		snprintf(err, errlen, "interrupted by signal %d: %s not started", (int)guard_signal,
			 argv[0]);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot start %s: %s", argv[0], strerror(errno));
		return -1;
	}
	if (pid == 0) {
#ifdef __linux__
		/* Killed with us, however we end (SIGKILL too), rather than left running. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(127);
#endif
		/* The guard's signals end the program as they would have ended us (even where
		 * a shell started us with SIGINT ignored); one that reached the handler here,
		 * before exec, ends it now. */
		if (guard_on) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			if (guard_signal)
				_exit(128 + guard_signal);
		}
		redirect(STDOUT_FILENO, out_path);
		redirect(STDERR_FILENO, err_path);
		execv(argv[0], argv);
		_exit(127);
	}
	(void)parent;
	guard_child = pid;
	/* A signal between fork() and the line above was not passed on. */
	if (guard_on && guard_signal)
		kill(pid, guard_signal);
	while (wait_child(pid, &status) < 0) {
		if (errno != EINTR) {
			guard_child = 0;
			snprintf(err, errlen, "waiting for %s: %s", argv[0], strerror(errno));
			return -1;
		}
	}
	guard_child = 0;
	if (guard_on && guard_signal) {
		snprintf(err, errlen, "interrupted by signal %d: %s stopped", (int)guard_signal,
			 argv[0]);
		return -1;
	}
	if (WIFSIGNALED(status)) {
		snprintf(err, errlen, "%s was killed by signal %d", argv[0], WTERMSIG(status));
		return -1;
	}
	if (WEXITSTATUS(status) == 127) {
		snprintf(err, errlen, "cannot run %s", argv[0]);
		return -1;
	}
	return WEXITSTATUS(status);
}

char *
spawn_last_line(const char *path, char *buf, size_t len)
{
	FILE *f = path ? fopen(path, "r") : NULL;
	char line[1024], tool[1024] = "";

	buf[0] = '\0';
	if (!f)
		return buf;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		while (n && (line[n - 1] == '\n' || line[n - 1] == ' '))
			line[--n] = '\0';
		if (!n || strcmp(line + strspn(line, "=0123456789"), "") == 0)
			continue;
		/* Valgrind prefixes its own lines with ==pid==; the program's are plain. */
		if (strncmp(line, "==", 2) == 0)
			snprintf(tool, sizeof(tool), "%s", line);
		else
			snprintf(buf, len, "%s", line);
	}
	fclose(f);
	if (!buf[0])
		snprintf(buf, len, "%s", tool);
	return buf;
}
