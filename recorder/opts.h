/*
 * opts.h - the options-size check is format/base/opts.h's; this name
 * remains for the files that still include it here.
 */
#ifndef REC_OPTS_H
#define REC_OPTS_H

#include "format/base/opts.h"

#define rec_opts_copy prec_opts_copy

#endif
