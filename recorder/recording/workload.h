/*
 * workload.h - the command perfrec starts and records.
 *
 * Call order: rec_workload_prepare() forks a child that waits; the caller
 * opens its events on the child's pid with enable_on_exec; then
 * rec_workload_start() lets the child exec, so counting starts exactly at
 * exec. rec_workload_cancel() (instead of start) makes the child exit
 * without running anything.
 */
#ifndef REC_WORKLOAD_H
#define REC_WORKLOAD_H

#include <stdbool.h>
#include <sys/types.h>

struct rec_workload {
	pid_t pid;
	int go_fd;      /* write end: one byte = exec, close = give up */
	int err_fd;     /* read end: the child's errno if exec failed */
	int pidfd;      /* pidfd of the child (-1 if unsupported) */
	bool exited;
	int status;     /* wait status once exited */
};

/* argv[0] is looked up in PATH. Returns 0 or -errno. */
int rec_workload_prepare(struct rec_workload *wl, char *const argv[]);
/* Lets the child exec. Returns 0, or -errno of the failed exec (ENOENT:
 * no such command ...), in which case the child has exited. */
int rec_workload_start(struct rec_workload *wl);
void rec_workload_cancel(struct rec_workload *wl);
/* Non-blocking: true once the child has exited (status filled). */
bool rec_workload_poll(struct rec_workload *wl);
/* Blocking wait. */
void rec_workload_wait(struct rec_workload *wl);
/* Shell-style exit code: exit status, or 128 + signal. */
int rec_workload_exit_code(const struct rec_workload *wl);
void rec_workload_release(struct rec_workload *wl);

#endif
