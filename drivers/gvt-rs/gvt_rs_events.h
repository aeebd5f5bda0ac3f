/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the gvt-rs policy engine (events/gvt_rs/ in tracefs).
 * The engine emits them through Rust wrappers (engine/trace.rs); the
 * tracepoints themselves are created in gvt_rs_events.c.
 *
 * Every event names the GPU ("gvtsim0", or an Intel GPU's PCI address)
 * and vGPUs by their gvt-rs id (the vgpu_id file of the vGPU); -1 is the
 * idle vGPU.
 */

#undef TRACE_SYSTEM
#undef TRACE_INCLUDE_FILE
#undef TRACE_INCLUDE_PATH
#define TRACE_SYSTEM gvt_rs
#define TRACE_INCLUDE_FILE gvt_rs_events
#define TRACE_INCLUDE_PATH ../drivers/gvt-rs

#if !defined(_GVT_RS_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _GVT_RS_EVENTS_H

#include <linux/tracepoint.h>

TRACE_EVENT(gvt_rs_switch,
	TP_PROTO(const char *gpu, int prev, int next, u64 slice_ns),
	TP_ARGS(gpu, prev, next, slice_ns),
	TP_STRUCT__entry(
		__string(gpu, gpu)
		__field(int, prev)
		__field(int, next)
		__field(u64, slice_ns)
	),
	TP_fast_assign(
		__assign_str(gpu);
		__entry->prev = prev;
		__entry->next = next;
		__entry->slice_ns = slice_ns;
	),
	TP_printk("gpu=%s prev=%d next=%d slice_ns=%llu", __get_str(gpu),
		  __entry->prev, __entry->next, __entry->slice_ns)
);

DECLARE_EVENT_CLASS(gvt_rs_workload,
	TP_PROTO(const char *gpu, int vgpu, unsigned int engine, u64 ns),
	TP_ARGS(gpu, vgpu, engine, ns),
	TP_STRUCT__entry(
		__string(gpu, gpu)
		__field(int, vgpu)
		__field(unsigned int, engine)
		__field(u64, ns)
	),
	TP_fast_assign(
		__assign_str(gpu);
		__entry->vgpu = vgpu;
		__entry->engine = engine;
		__entry->ns = ns;
	),
	TP_printk("gpu=%s vgpu=%d engine=%u ns=%llu", __get_str(gpu),
		  __entry->vgpu, __entry->engine, __entry->ns)
);

/* ns: time the workload waited in its V-Channel queue */
DEFINE_EVENT(gvt_rs_workload, gvt_rs_dispatch,
	TP_PROTO(const char *gpu, int vgpu, unsigned int engine, u64 ns),
	TP_ARGS(gpu, vgpu, engine, ns)
);

/* ns: GPU time the workload used */
DEFINE_EVENT(gvt_rs_workload, gvt_rs_complete,
	TP_PROTO(const char *gpu, int vgpu, unsigned int engine, u64 ns),
	TP_ARGS(gpu, vgpu, engine, ns)
);

TRACE_EVENT(gvt_rs_gtt_load,
	TP_PROTO(const char *gpu, int vgpu, unsigned int slots, u64 entries),
	TP_ARGS(gpu, vgpu, slots, entries),
	TP_STRUCT__entry(
		__string(gpu, gpu)
		__field(int, vgpu)
		__field(unsigned int, slots)
		__field(u64, entries)
	),
	TP_fast_assign(
		__assign_str(gpu);
		__entry->vgpu = vgpu;
		__entry->slots = slots;
		__entry->entries = entries;
	),
	TP_printk("gpu=%s vgpu=%d slots=%u entries=%llu", __get_str(gpu),
		  __entry->vgpu, __entry->slots, __entry->entries)
);

TRACE_EVENT(gvt_rs_relocate,
	TP_PROTO(const char *gpu, int vgpu, unsigned int from,
		 unsigned int to, unsigned int slots),
	TP_ARGS(gpu, vgpu, from, to, slots),
	TP_STRUCT__entry(
		__string(gpu, gpu)
		__field(int, vgpu)
		__field(unsigned int, from)
		__field(unsigned int, to)
		__field(unsigned int, slots)
	),
	TP_fast_assign(
		__assign_str(gpu);
		__entry->vgpu = vgpu;
		__entry->from = from;
		__entry->to = to;
		__entry->slots = slots;
	),
	TP_printk("gpu=%s vgpu=%d from=%u to=%u slots=%u", __get_str(gpu),
		  __entry->vgpu, __entry->from, __entry->to, __entry->slots)
);

#endif /* _GVT_RS_EVENTS_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
