/*
 * stat.h - `perfrec stat`: count groups and print them live, perf-stat style.
 */
#ifndef REC_STAT_H
#define REC_STAT_H

/* argv[0] is "stat". Returns the process exit status. */
int rec_stat_main(int argc, char **argv);

#endif
