#include "measure/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

int
spawn_wait(char *const argv[], const char *out_path, const char *err_path, char *err, size_t errlen)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot start %s: %s", argv[0], strerror(errno));
		return -1;
	}
	if (pid == 0) {
		redirect(STDOUT_FILENO, out_path);
		redirect(STDERR_FILENO, err_path);
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			snprintf(err, errlen, "waiting for %s: %s", argv[0], strerror(errno));
			return -1;
		}
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
