/*
 * workload.c - fork, wait for "go", exec; see workload.h.
 */
#include "recorder/recording/workload.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int rec_workload_prepare(struct rec_workload *wl, char *const argv[])
{
	int go[2], er[2];
	pid_t pid;

	memset(wl, 0, sizeof(*wl));
	wl->go_fd = wl->err_fd = wl->pidfd = -1;
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(er, O_CLOEXEC) < 0) {
		int e = -errno;
		close(go[0]);
		close(go[1]);
		return e;
	}
	pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(go[0]);
		close(go[1]);
		close(er[0]);
		close(er[1]);
		return e;
	}
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(er[0]);
		/* Only exec on an explicit "go": EOF means the parent gave up. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(er[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(er[1]);
	wl->pid = pid;
	wl->go_fd = go[1];
	wl->err_fd = er[0];
#ifdef SYS_pidfd_open
	wl->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (wl->pidfd < 0)
		wl->pidfd = -1;
#endif
	return 0;
}

int rec_workload_start(struct rec_workload *wl)
{
	char c = 'g';
	int e = 0;
	ssize_t n;

	if (write(wl->go_fd, &c, 1) != 1)
		return -errno;
	close(wl->go_fd);
	wl->go_fd = -1;
	/* The error pipe is close-on-exec: EOF = the exec succeeded. */
	do {
		n = read(wl->err_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(wl->err_fd);
	wl->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		rec_workload_wait(wl);
		return -e;
	}
	return 0;
}

void rec_workload_cancel(struct rec_workload *wl)
{
	if (wl->go_fd >= 0) {
		close(wl->go_fd);
		wl->go_fd = -1;
	}
	if (wl->pid > 0 && !wl->exited)
		rec_workload_wait(wl);
}

bool rec_workload_poll(struct rec_workload *wl)
{
	int st;

	if (wl->exited)
		return true;
	if (wl->pid <= 0)
		return false;
	if (waitpid(wl->pid, &st, WNOHANG) == wl->pid) {
		wl->exited = true;
		wl->status = st;
	}
	return wl->exited;
}

void rec_workload_wait(struct rec_workload *wl)
{
	int st;

	if (wl->exited || wl->pid <= 0)
		return;
	while (waitpid(wl->pid, &st, 0) < 0) {
		if (errno != EINTR)
			return;
	}
	wl->exited = true;
	wl->status = st;
}

int rec_workload_exit_code(const struct rec_workload *wl)
{
	if (!wl->exited)
		return -1;
	if (WIFEXITED(wl->status))
		return WEXITSTATUS(wl->status);
	if (WIFSIGNALED(wl->status))
		return 128 + WTERMSIG(wl->status);
	return -1;
}

void rec_workload_release(struct rec_workload *wl)
{
	if (!wl)
		return;
	if (wl->go_fd >= 0)
		close(wl->go_fd);
	if (wl->err_fd >= 0)
		close(wl->err_fd);
	if (wl->pidfd >= 0)
		close(wl->pidfd);
	wl->go_fd = wl->err_fd = wl->pidfd = -1;
}
