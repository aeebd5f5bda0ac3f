// SPDX-License-Identifier: GPL-2.0
/*
 * The gvt-rs tracepoints (gvt_rs_events.h), with the rust_do_trace_*
 * entry points that engine/trace.rs calls.
 */

#define CREATE_TRACE_POINTS
#define CREATE_RUST_TRACE_POINTS
#include "gvt_rs_events.h"
